-- Verify agent-state:queue on pg
select job_id, thread_id, owner, queue, status, payload, priority, run_at, attempts, max_attempts, lease_owner,
       lease_expires_at, fencing_token, last_error, result, idempotency_key, created_at, updated_at, finished_at,
       available_at
from ai.agent_jobs where false;
select job_id, archived_at from ai.agent_jobs_archive where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.agent_jobs'::regclass);
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.agent_jobs_archive'::regclass);
-- the one-thread-at-a-time rule is a constraint, not only a habit of the claim
select 1 / (select (indisunique and pg_catalog.pg_get_expr(indpred, indrelid) like '%IN_PROGRESS%')::int
            from pg_catalog.pg_index where indexrelid = 'ai.agent_jobs_one_running_per_thread'::regclass);
-- the claim index (replaced by agent_jobs_claim_pending in hot_renewals, by agent_jobs_claim_fair in job_keys)
select 1 / (pg_catalog.to_regclass('ai.agent_jobs_claim') is not null
            or pg_catalog.to_regclass('ai.agent_jobs_claim_pending') is not null
            or pg_catalog.to_regclass('ai.agent_jobs_claim_fair') is not null)::int;
select 1 / (select count(*)::int from ai.notify_key);
-- the fence is checked again at commit: a deferred constraint trigger on ai.job_fences
select job_id, fencing_token from ai.job_fences where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.job_fences'::regclass);
select claimed_at, attempt_log from ai.agent_jobs where false;
select 'ai._check_job_row(text, text, integer, integer, text, text, timestamptz)'::regprocedure;
select 1 / count(*) from pg_catalog.pg_constraint where conname = 'agent_jobs_row_check' and conrelid = 'ai.agent_jobs'::regclass;
select queue, pending, due, in_progress, expired_leases, awaiting_human, completed, failed, cancelled,
       oldest_due_age, failed_attempts, expired_attempts
from (select null::ai.queue_stats_row r) s, lateral (select (s.r).*) x where false;
