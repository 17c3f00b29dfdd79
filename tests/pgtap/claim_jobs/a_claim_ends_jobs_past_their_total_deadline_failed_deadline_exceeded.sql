\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/queue.sql

-- Past the total deadline a job is not run again: a claim that meets it ends it FAILED, whether it
-- waits (PENDING, e.g. after a failure) or its attempt ran out there with attempts left.
set local role tenant_a;
select (ai.enqueue_job('qa1', max_attempts => 5, deadline => '2030-01-01 00:01:00+00')).job_id as running \gset
select (ai.enqueue_job('qa2', run_at => '2030-01-01 00:00:30+00', deadline => '2030-01-01 00:01:00+00')).job_id as waiting \gset
set local role app_service;
select is((select count(*)::int from ai.claim_jobs('w1', '5 minutes', 'default', 10)), 1, 'one job due, claimed');
select is((select j.lease_expires_at from ai.get_job(:running) j), '2030-01-01 00:01:00+00'::timestamptz,
          'its lease ends at the total deadline');
select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select is((select count(*)::int from ai.claim_jobs('w2', '5 minutes', 'default', 10)), 0, 'nothing is claimed at the deadline');
reset role;
select is(array(select j.status || ' / ' || j.last_error from ai.agent_jobs j where j.job_id in (:running, :waiting) order by j.job_id),
          array['FAILED / deadline exceeded', 'FAILED / deadline exceeded'], 'both ended FAILED, deadline exceeded');
select is((select a.outcome from ai.job_attempts(:running) a), 'deadline_exceeded', 'the running attempt''s history says so');

select * from finish();
rollback;
