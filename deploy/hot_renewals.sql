-- Deploy agent-state:hot_renewals to pg
-- requires: queue
--
-- A lease renewal (ai.renew_lease, ai.renew_leases) writes lease_expires_at and updated_at, and so
-- the generated available_at. The claim index of 0.1.0 held available_at (the lease expiry while a
-- job runs), so every renewal was a non-HOT update: a new index entry in each index of the table,
-- on the busiest rows. Here no index holds a column a renewal writes, and a renewal is HOT:
--   agent_jobs_claim_pending (in place of agent_jobs_claim): the PENDING jobs of a queue in claim
--     order (priority desc, run_at, job_id); what a claim scans for due jobs.
--   agent_jobs_in_progress: the running jobs of a queue, where a claim (and reap_expired) looks
--     for leases that ran out, reading lease_expires_at from the row.
-- available_at stays a column (0.1.0 readers select it), in no index.
-- Under a live fleet (docs/operations.md, "Upgrading under a live fleet"): the new indexes may be
-- built first with CREATE INDEX CONCURRENTLY, which `if not exists` keeps. The drop comes first:
-- it takes the strongest lock (ACCESS EXCLUSIVE on ai.agent_jobs, bounded by the lock_timeout)
-- before anything else, since a script that held SHARE (a CREATE INDEX) and then asked for more
-- would deadlock with a worker that reads the table and then writes it.
begin;

select pg_catalog.set_config('lock_timeout', '5s', true) where pg_catalog.current_setting('lock_timeout') = '0';

drop index if exists ai.agent_jobs_claim;
create index if not exists agent_jobs_claim_pending on ai.agent_jobs (queue, priority desc, run_at, job_id)
  where status = 'PENDING';
create index if not exists agent_jobs_in_progress on ai.agent_jobs (queue)
  where status = 'IN_PROGRESS';

commit;
