-- Revert agent-state:job_row_check_fast_path from pg
-- Back to the CHECK that calls ai._check_job_row for every row.
begin;

alter table ai.agent_jobs
  drop constraint agent_jobs_row_check,
  add constraint agent_jobs_row_check
    check (ai._check_job_row(status, queue, attempts, max_attempts, idempotency_key, lease_owner, lease_expires_at));

comment on function ai._check_job_row(text, text, integer, integer, text, text, timestamptz) is
  'Internal: the CHECK of ai.agent_jobs rows (status, queue name, attempts, idempotency key, a running job''s lease); raises 23514 naming the rule a row breaks.';

commit;
