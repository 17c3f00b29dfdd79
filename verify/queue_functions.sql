-- Verify agent-state:queue_functions on pg

begin;

select 'ai._attempt_entry(integer, text, bigint, timestamptz, timestamptz, timestamptz, text, text)'::regprocedure;
select 'ai._log_attempt()'::regprocedure;
select 'ai._job_status_moved()'::regprocedure;
select 'ai._check_lease(interval)'::regprocedure;
select 'ai._check_claim(text, interval, text)'::regprocedure;
select 'ai._raise_lease_lost(bigint, bigint)'::regprocedure;
select 'ai._raise_not_allowed(bigint, text)'::regprocedure;
select 'ai._backoff(integer)'::regprocedure;
select 'ai._finish_spent(bigint, timestamptz)'::regprocedure;
select 'ai.queue_channel(text)'::regprocedure;
select 'ai._check_enqueue(text, jsonb, text, integer, integer, text)'::regprocedure;
select 'ai._enqueue_owner(text)'::regprocedure;
select 'ai.enqueue_job(text, jsonb, text, timestamptz, integer, integer, text, interval, timestamptz, timestamptz, text, jsonb)'::regprocedure;
select 'ai._check_deadlines(timestamptz, interval, timestamptz, timestamptz)'::regprocedure;
select 'ai._end_overdue(text, timestamptz, timestamptz)'::regprocedure;
select 'ai.set_queue_deadlines(text, interval, interval, interval)'::regprocedure;
select 'ai.snooze_job(bigint, bigint, timestamptz)'::regprocedure;
select 'ai._check_headers(jsonb)'::regprocedure;
select 'ai._job_key(text, text)'::regprocedure;
select 'ai._fair_base(text, text, integer, timestamptz)'::regprocedure;
select 'ai._key_step(text, text)'::regprocedure;
select 'ai._advance_clock(text, double precision)'::regprocedure;
select 'ai._activate_due(text, timestamptz)'::regprocedure;
select 'ai._admit(text, bigint[], bigint[], timestamptz, timestamptz)'::regprocedure;
select 'ai.claim_job(text, interval, text)'::regprocedure;
select 'ai.claim_jobs(text, interval, text, integer)'::regprocedure;
select 'ai.claim_jobs(text, interval, text, integer, text)'::regprocedure;
select 'ai._server_start()'::regprocedure;
select 'ai.hold_worker_liveness(text)'::regprocedure;
select 'ai.release_worker_liveness(text)'::regprocedure;
select 'ai._dead_workers()'::regprocedure;
select 'ai._liveness_class()'::regprocedure;
select 'ai._lease_held(timestamptz, timestamptz, timestamptz, timestamptz)'::regprocedure;
select 'ai.renew_lease(bigint, bigint, interval)'::regprocedure;
select 'ai.renew_leases(text, bigint[], bigint[], interval)'::regprocedure;
select 'ai._written_here(xid)'::regprocedure;
select 'ai._xmax_in_flight(xid)'::regprocedure;
select 'ai._check_fence_at_commit()'::regprocedure;
select 'ai.fenced_write(bigint, bigint)'::regprocedure;
select 'ai.complete_job(bigint, bigint, jsonb)'::regprocedure;
select 'ai.complete_jobs(bigint[], bigint[], jsonb[])'::regprocedure;
select 'ai.complete_and_claim(text, interval, text, integer, text, bigint[], bigint[], jsonb[])'::regprocedure;
select 'ai.fail_job(bigint, bigint, text, interval)'::regprocedure;
select 'ai.release_job(bigint, bigint)'::regprocedure;
select 'ai.cancel_job(bigint)'::regprocedure;
select 'ai.retry_dead_job(bigint)'::regprocedure;
select 'ai.get_job(bigint)'::regprocedure;
select 'ai.job_attempts(bigint)'::regprocedure;
select 'ai.queue_stats(text)'::regprocedure;
select 'ai.reap_expired(text)'::regprocedure;
select 'ai.archive_jobs(interval, integer)'::regprocedure;
select 1 / count(*) from pg_catalog.pg_trigger where tgname = 'agent_jobs_attempt_ended' and tgrelid = 'ai.agent_jobs'::regclass;
select 1 / count(*) from pg_catalog.pg_trigger where tgname = 'agent_jobs_status_moved' and tgrelid = 'ai.agent_jobs'::regclass;
select 1 / count(*) from pg_catalog.pg_trigger where tgname = 'job_fences_checked_at_commit' and tgrelid = 'ai.job_fences'::regclass;

select 1 / (select (tgdeferrable and tginitdeferred)::int from pg_catalog.pg_trigger
            where tgrelid = 'ai.job_fences'::regclass and tgname = 'job_fences_checked_at_commit');

rollback;
