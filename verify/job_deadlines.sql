-- Verify agent-state:job_deadlines on pg

select timeout, deadline, start_by from ai.agent_jobs where false;
select timeout, deadline, start_by from ai.agent_jobs_archive where false;
select timeout, deadline, start_by from ai_archive.agent_jobs where false;
select timeout, deadline, start_by from ai_archive.agent_jobs_archive where false;
select queue, timeout, deadline_after, start_within, updated_at from ai.queue_deadlines where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.queue_deadlines'::regclass);
select 1 / (count(*) = 2)::int from pg_catalog.pg_indexes where schemaname = 'ai' and indexname in ('agent_jobs_start_by', 'agent_jobs_deadline');
