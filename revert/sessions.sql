-- Revert agent-state:sessions from pg
begin;
drop function ai.get_session(text);
drop function ai._session_owner(text);
drop function ai._check_thread_id(text);
drop table ai.agent_sessions;
commit;
