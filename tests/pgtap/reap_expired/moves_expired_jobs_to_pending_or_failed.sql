\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as retried \gset
select (ai.enqueue_job('qa2', max_attempts => 1)).job_id as spent \gset
set local role app_service;
select count(*) from ai.claim_jobs('w', '1 minute', 'default', 10) \gset
select is(ai.reap_expired(), 0, 'nothing expired yet');
select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select is(ai.reap_expired(), 2, 'two leases ran out');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select (status, run_at, lease_owner, last_error) from ai.agent_jobs where job_id = :retried),
          ('PENDING'::text, '2030-01-01 00:01:00+00'::timestamptz, null::text, 'the lease of attempt 1 expired'::text), 'one is PENDING again, due now');
select is((select (status, finished_at) from ai.agent_jobs where job_id = :spent), ('FAILED'::text, '2030-01-01 00:01:00+00'::timestamptz), 'the spent one is FAILED');
set local role app_service;

select * from finish();
rollback;
