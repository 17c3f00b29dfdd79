-- Revert agent-state:session_lifecycle from pg
begin;
drop function ai.set_session_status(text, text);
drop function ai.create_session(text, jsonb);
drop function ai._session_transition_allowed(text, text);
commit;
