-- Verify agent-state:operator_reads_functions on pg

begin;

select 'ai.list_sessions(text, text, integer, text)'::regprocedure;
select 'ai.list_jobs(text, text, text, integer, bigint)'::regprocedure;
select 'ai.find_jobs(text, text, text, interval, text[], text, integer, bigint)'::regprocedure;
select 'ai.find_sessions(text, text, interval, text[], text, integer, text)'::regprocedure;
select 'ai._check_run_filters(interval, text[], text)'::regprocedure;
select 'ai._check_job_list(text, text, integer)'::regprocedure;
select 'ai.session_timeline(text, integer, timestamptz, text, text)'::regprocedure;
select 'ai.checkpoint_tree(text, text, integer, text)'::regprocedure;
select 'ai.session_timeline_newest(text, integer, timestamptz, text, text)'::regprocedure;
select 'ai.session_timeline_total(text)'::regprocedure;
select 'ai.thread_run_status(text[])'::regprocedure;
select 'ai.checkpoint_nodes(text, text, text[])'::regprocedure;
select 'ai._timeline_cursor(text, text, text)'::regprocedure;
select 'ai.archive_backlog(interval, interval)'::regprocedure;
select 'ai.list_workers(integer, text, interval)'::regprocedure;
select 1 / (select (not pg_catalog.has_function_privilege('ai_user', 'ai.list_workers(integer, text, interval)', 'execute'))::int);

select 1 / (select (not pg_catalog.has_function_privilege('ai_user', 'ai.archive_backlog(interval, interval)', 'execute'))::int);

rollback;
