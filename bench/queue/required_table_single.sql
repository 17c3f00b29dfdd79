-- The plain SQL of the design on a table with only what the issue requires (bench_queue.required_jobs:
-- the indexes of ai.agent_jobs and its RLS policy, paid as the worker; no CHECK, no foreign key).
update bench_queue.required_jobs
set status = 'IN_PROGRESS', attempts = attempts + 1, lease_owner = 'bench-worker',
    lease_expires_at = now() + interval '60 seconds', updated_at = now()
where job_id = (select job_id from bench_queue.required_jobs
                where status in ('PENDING', 'IN_PROGRESS') and queue = 'bench' and available_at <= now()
                order by priority desc, available_at, job_id limit 1 for update skip locked)
returning job_id \gset
update bench_queue.required_jobs set status = 'COMPLETED', lease_owner = null, lease_expires_at = null,
  finished_at = now(), updated_at = now() where job_id = :job_id;
