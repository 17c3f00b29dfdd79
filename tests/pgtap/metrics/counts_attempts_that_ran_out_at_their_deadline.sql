\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

-- A job with a 30-second run timeout, claimed with a one-minute lease: the lease ends at the
-- attempt's deadline, and the claim after it takes the job over as "deadline exceeded", which
-- ai.metrics() counts apart from the leases that expired.
set local role tenant_a;
select (ai.enqueue_job('qa1', '{}', 'slow', timeout => '30 seconds')).job_id as j \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute', 'slow')).lease_expires_at as ends \gset
select is(:'ends'::timestamptz, '2030-01-01 00:00:30+00'::timestamptz, 'the lease ends at the attempt''s deadline');
select set_config('ai.frozen_now', '2030-01-01 00:00:31+00', true) is not null as moved \gset
select (ai.claim_job('w2', '1 minute', 'slow')).attempts as attempts \gset
select is(:attempts, 2, 'the next claim took it over');
select results_eq($$select metric, value from ai.metrics()
                    where labels = '{"queue": "slow"}' and metric like 'agent_state_attempts_%' order by metric$$,
  $$values ('agent_state_attempts_deadline_exceeded', 1::double precision),
           ('agent_state_attempts_expired', 0),
           ('agent_state_attempts_failed', 0)$$,
  'the attempt that ran out of time counts as deadline exceeded, not as an expired lease');

select * from finish();
rollback;
