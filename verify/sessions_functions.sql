-- Verify agent-state:sessions_functions on pg

begin;

select 'ai._session_as_read(ai.agent_sessions)'::regprocedure;
select 'ai._move_session_status(text, text)'::regprocedure;
select 'ai._fence(text, bigint, bigint)'::regprocedure;
select 'ai._queue_fence_check(bigint, bigint)'::regprocedure;
-- the reads return ai.session, the columns a 0.1.0 reader of the table got, in their order
select 1 / (pg_catalog.string_agg(a.attname, ',' order by a.attnum)
            = 'thread_id,owner,status,config,current_checkpoint_id,last_seq,created_at,updated_at,completed_at')::int
from pg_catalog.pg_attribute a
where a.attrelid = (select t.typrelid from pg_catalog.pg_type t where t.oid = 'ai.session'::pg_catalog.regtype)
  and a.attnum > 0 and not a.attisdropped;
select 1 / (pg_catalog.pg_get_function_result('ai.get_session(text)'::regprocedure) = 'ai.session')::int;

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
