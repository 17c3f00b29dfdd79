-- Revert agent-state:queue_functions from pg

begin;

drop trigger job_fences_checked_at_commit on ai.job_fences;
drop trigger agent_jobs_status_moved on ai.agent_jobs;
drop trigger agent_jobs_attempt_ended on ai.agent_jobs;
drop function ai.archive_jobs(interval, integer);
drop function ai.reap_expired(text);
drop function ai.queue_stats(text);
drop function ai.job_attempts(bigint);
drop function ai.get_job(bigint);
drop function ai.retry_dead_job(bigint);
drop function ai.cancel_job(bigint);
drop function ai.release_job(bigint, bigint);
drop function ai.fail_job(bigint, bigint, text, interval);
drop function ai.complete_jobs(bigint[], bigint[], jsonb[]);
drop function ai.complete_job(bigint, bigint, jsonb);
drop function ai.fenced_write(bigint, bigint);
drop function ai._check_fence_at_commit();
drop function ai._written_here(xid);
drop function ai.renew_leases(text, bigint[], bigint[], interval);
drop function ai.renew_lease(bigint, bigint, interval);
drop function ai.claim_jobs(text, interval, text, integer);
drop function ai.claim_job(text, interval, text);
drop function ai.enqueue_job(text, jsonb, text, timestamptz, integer, integer, text);
drop function ai.queue_channel(text);
drop function ai._finish_spent(bigint, timestamptz);
drop function ai._backoff(integer);
drop function ai._raise_not_allowed(bigint, text);
drop function ai._raise_lease_lost(bigint, bigint);
drop function ai._lock_thread(text);
drop function ai._check_claim(text, interval, text);
drop function ai._check_lease(interval);
drop function ai._job_status_moved();
drop function ai._log_attempt();
drop function ai._attempt_entry(integer, text, bigint, timestamptz, timestamptz, timestamptz, text, text);

commit;
