-- Revert agent-state:hot_renewals from pg

begin;

drop index ai.agent_jobs_in_progress;
drop index ai.agent_jobs_claim_pending;
create index agent_jobs_claim on ai.agent_jobs (queue, priority desc, available_at, job_id)
  where status in ('PENDING', 'IN_PROGRESS') and available_at is not null;

commit;
