-- Verify agent-state:job_row_check_fast_path on pg
-- The one CHECK of ai.agent_jobs tests the rules itself and calls ai._check_job_row only after an OR.
select 1 / (select (count(*) = 1
                    and bool_and(pg_catalog.pg_get_constraintdef(oid) like '%char_length(queue)%OR ai._check_job_row(%'))::integer
            from pg_catalog.pg_constraint where conrelid = 'ai.agent_jobs'::regclass and contype = 'c');
