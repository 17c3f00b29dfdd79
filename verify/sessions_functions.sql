-- Verify agent-state:sessions_functions on pg

begin;

select 'ai._session_as_read(ai.agent_sessions)'::regprocedure;
select 'ai._fence(text, bigint, bigint)'::regprocedure;

select 'ai._check_thread_id(text)'::regprocedure;
select 'ai._session_owner(text)'::regprocedure;
select 'ai.get_session(text)'::regprocedure;
select 'ai._session_transition_allowed(text, text)'::regprocedure;
select 'ai._guard_session_status()'::regprocedure;
select 'ai._start_session(text, text, jsonb, jsonb)'::regprocedure;
select 'ai.create_session(text, jsonb)'::regprocedure;
select 'ai.set_session_status(text, text)'::regprocedure;
select 1 / count(*) from pg_catalog.pg_trigger where tgname = 'agent_sessions_status_transition' and tgrelid = 'ai.agent_sessions'::regclass;

rollback;
