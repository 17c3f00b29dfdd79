-- The plain SQL of the design: claim with FOR UPDATE SKIP LOCKED, then a separate complete.
update bench_queue.jobs
set status = 'IN_PROGRESS', attempts = attempts + 1, lease_owner = 'bench-worker',
    lease_expires_at = now() + interval '60 seconds', updated_at = now()
where job_id = (select job_id from bench_queue.jobs
                where status = 'PENDING' and queue = 'bench' and run_at <= now()
                order by priority desc, run_at, job_id limit 1 for update skip locked)
returning job_id \gset
update bench_queue.jobs set status = 'COMPLETED', lease_owner = null, lease_expires_at = null,
  finished_at = now(), updated_at = now() where job_id = :job_id;
