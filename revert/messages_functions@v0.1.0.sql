-- Revert agent-state:messages_functions from pg

begin;

drop trigger agent_sessions_last_seq on ai.agent_sessions;
drop trigger session_messages_seq on ai.session_messages;
drop function ai.get_messages(text, bigint, integer);
drop function ai.append_message_idempotent(text, text, jsonb, integer, text, integer);
drop function ai.message_key(text, text, jsonb, integer);
drop function ai.estimate_tokens(jsonb);
drop function ai._guard_last_seq();
drop function ai._guard_message_seq();

commit;
