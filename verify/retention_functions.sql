-- Verify agent-state:retention_functions on pg

begin;

select 'ai._copy_columns(text, boolean)'::regprocedure;
select 'ai._lock_finished_sessions(text[], timestamptz)'::regprocedure;
select 'ai.archive_sessions(interval, integer)'::regprocedure;
select 'ai.restore_session(text)'::regprocedure;
select 'ai.archive_all_sessions(interval, integer)'::regprocedure;
select 'ai._archive_threads(text[])'::regprocedure;
select 'ai.archive_skips(integer, text)'::regprocedure;

rollback;
