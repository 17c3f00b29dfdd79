-- Revert agent-state:session_lifecycle from pg
begin;
drop function ai.set_session_status(text, text);
drop function ai.create_session(text, jsonb);
drop function ai._start_session(text, text, jsonb, jsonb);
drop trigger agent_sessions_status_transition on ai.agent_sessions;
drop function ai._guard_session_status();
drop function ai._session_transition_allowed(text, text);
commit;
