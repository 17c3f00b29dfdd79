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
select 'ai.agent_jobs_claim'::regclass;
select 1 / (select count(*)::int from ai.notify_key);
select 'ai.queue_channel(text)'::regprocedure;
select 'ai.enqueue_job(text, jsonb, text, timestamptz, integer, integer, text)'::regprocedure;
select 'ai.claim_job(text, interval, text)'::regprocedure;
select 'ai.claim_jobs(text, interval, text, integer)'::regprocedure;
select 'ai.renew_lease(bigint, bigint, interval)'::regprocedure;
select 'ai.fenced_write(bigint, bigint)'::regprocedure;
-- the fence is checked again at commit: a deferred constraint trigger on ai.job_fences
select job_id, fencing_token from ai.job_fences where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.job_fences'::regclass);
select 1 / (select (tgdeferrable and tginitdeferred)::int from pg_catalog.pg_trigger
            where tgrelid = 'ai.job_fences'::regclass and tgname = 'job_fences_checked_at_commit');
select 'ai._check_fence_at_commit()'::regprocedure;
select 'ai._written_here(xid)'::regprocedure;
select 'ai.complete_job(bigint, bigint, jsonb)'::regprocedure;
select 'ai.complete_jobs(bigint[], bigint[], jsonb[])'::regprocedure;
select 'ai.fail_job(bigint, bigint, text, interval)'::regprocedure;
select 'ai.release_job(bigint, bigint)'::regprocedure;
select 'ai.cancel_job(bigint)'::regprocedure;
select 'ai.retry_dead_job(bigint)'::regprocedure;
select 'ai.get_job(bigint)'::regprocedure;
select 'ai.queue_stats(text)'::regprocedure;
select 'ai.job_attempts(bigint)'::regprocedure;
select claimed_at, attempt_log from ai.agent_jobs where false;
select 'ai.reap_expired(text)'::regprocedure;
select 'ai.archive_jobs(interval, integer)'::regprocedure;
