-- Verify agent-state:queue_lean_writes on pg
-- One CHECK on ai.agent_jobs (through ai._check_job_row), and no BEFORE trigger on it but the
-- attempt log's (queue), whose WHEN clause keeps it off claims and renewals.
select 'ai._check_job_row(text, text, integer, integer, text, text, timestamptz)'::regprocedure;
select 1 / (select (count(*) = 1 and bool_and(conname = 'agent_jobs_row_check'))::integer
            from pg_catalog.pg_constraint where conrelid = 'ai.agent_jobs'::regclass and contype = 'c');
select 1 / (select (count(*) = 0)::integer from pg_catalog.pg_trigger
            where tgrelid = 'ai.agent_jobs'::regclass and not tgisinternal and (tgtype & 2) <> 0  -- 2: BEFORE
              and tgname <> 'agent_jobs_attempt_ended');
select 1 / (select (count(*) = 1)::integer from pg_catalog.pg_trigger
            where tgrelid = 'ai.agent_jobs'::regclass and not tgisinternal and tgname = 'agent_jobs_status_moved');
