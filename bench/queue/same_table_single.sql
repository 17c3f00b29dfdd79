-- The plain SQL of the design on the very table ai.agent_jobs (run as its owner: no RLS, no
-- token, no one-thread check): what the functions' checks cost on top of the same writes.
update ai.agent_jobs
set status = 'IN_PROGRESS', attempts = attempts + 1, lease_owner = 'bench-worker',
    lease_expires_at = now() + interval '60 seconds', updated_at = now()
where job_id = (select job_id from ai.agent_jobs
                where status in ('PENDING', 'IN_PROGRESS') and queue = 'bench' and available_at <= now()
                order by priority desc, available_at, job_id limit 1 for update skip locked)
returning job_id \gset
update ai.agent_jobs set status = 'COMPLETED', lease_owner = null, lease_expires_at = null,
  finished_at = now(), updated_at = now() where job_id = :job_id;
