\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

-- A job with a 30-second run timeout, claimed with a one-minute lease: the lease ends at the
-- attempt's deadline, claimed_at + 30 s; with a total deadline sooner than that, at the deadline.
set local role tenant_a;
select (ai.enqueue_job('qa1', timeout => '30 seconds')).job_id as id \gset
select (ai.enqueue_job('qa2', timeout => '30 seconds', deadline => '2030-01-01 00:00:10+00')).job_id as id2 \gset
set local role app_service;
select is((ai.claim_job('w1', '1 minute')).lease_expires_at, '2030-01-01 00:00:30+00'::timestamptz,
          'claim_job leases until claimed_at + timeout');
select is((ai.claim_job('w2', '1 minute')).lease_expires_at, '2030-01-01 00:00:10+00'::timestamptz,
          'or until the total deadline when it comes first');
reset role;
delete from ai.agent_jobs;
set local role tenant_a;
select (ai.enqueue_job('qa1', timeout => '5 seconds')).job_id as id3 \gset
set local role app_service;
select is((select c.lease_expires_at from ai.claim_jobs('w1', '1 minute', 'default', 10) c where c.job_id = :id3),
          '2030-01-01 00:00:05+00'::timestamptz, 'claim_jobs caps the lease the same way');

select * from finish();
rollback;
