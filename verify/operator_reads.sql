-- Verify agent-state:operator_reads on pg
select 'ai.list_sessions(text, text, integer)'::regprocedure;
select 'ai.list_jobs(text, text, text, integer)'::regprocedure;
select 'ai.session_timeline(text, integer)'::regprocedure;
select 'ai.checkpoint_tree(text, text, integer)'::regprocedure;
select 'ai.archive_backlog(interval, interval)'::regprocedure;
select 1 / (pg_catalog.to_regclass('ai.agent_sessions_created') is not null)::int;
-- every function of the change pins its search_path
select 1 / (select (count(*) = 5)::int from pg_catalog.pg_proc
            where pronamespace = 'ai'::regnamespace
              and proname in ('list_sessions', 'list_jobs', 'session_timeline', 'checkpoint_tree', 'archive_backlog')
              and proconfig @> array['search_path=pg_catalog, pg_temp']);
select 1 / (select (not pg_catalog.has_function_privilege('ai_user', 'ai.archive_backlog(interval, interval)', 'execute'))::int);
