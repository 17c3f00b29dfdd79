\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

-- A job not started by start_by ends FAILED ("start deadline passed") at the claim that meets it,
-- instead of running late; one started in time is not ended by it later.
set local role tenant_a;
select (ai.enqueue_job('qa1', start_by => '2030-01-01 00:00:10+00')).job_id as late \gset
select (ai.enqueue_job('qa2', start_by => '2030-01-01 00:00:10+00')).job_id as started \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).job_id as first \gset
-- the other one was not taken (one claim, one job); whichever it is, fail the started one for a retry
select set_config('ai.frozen_now', '2030-01-01 00:00:11+00', true) is not null as moved \gset
select ai.fail_job(:first, 1, 'boom', '0 seconds') is not null as failed \gset
select is((select count(*)::int from ai.claim_jobs('w2', '1 minute', 'default', 10)), 1, 'the started job is retried');
reset role;
select is((select j.job_id from ai.agent_jobs j where j.status = 'IN_PROGRESS'), :first::bigint, 'it is the one started in time');
select is((select j.status || ' / ' || j.last_error from ai.agent_jobs j where j.job_id <> :first),
          'FAILED / start deadline passed', 'the one never started ended FAILED with the reason');
select is((select j.finished_at from ai.agent_jobs j where j.job_id <> :first), '2030-01-01 00:00:11+00'::timestamptz,
          'at the claim that met it');

select * from finish();
rollback;
