-- Revert agent-state:messages from pg
begin;
drop function ai.get_messages(text, bigint, integer);
drop function ai.append_message_idempotent(text, text, jsonb, integer, text, integer);
drop type ai.appended_message;
drop function ai.message_key(text, text, jsonb, integer);
drop function ai.estimate_tokens(jsonb);
drop trigger agent_sessions_last_seq on ai.agent_sessions;
drop function ai._guard_last_seq();
drop table ai.session_messages;
drop function ai._guard_message_seq();
commit;
