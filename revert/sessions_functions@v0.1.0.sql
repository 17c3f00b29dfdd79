-- Revert agent-state:sessions_functions from pg

begin;

drop trigger agent_sessions_status_transition on ai.agent_sessions;
drop function ai.set_session_status(text, text);
drop function ai.create_session(text, jsonb);
drop function ai._start_session(text, text, jsonb, jsonb);
drop function ai._guard_session_status();
drop function ai._session_transition_allowed(text, text);
drop function ai.get_session(text);
drop function ai._session_owner(text);
drop function ai._check_thread_id(text);

commit;
