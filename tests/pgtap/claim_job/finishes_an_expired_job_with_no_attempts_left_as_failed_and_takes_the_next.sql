\ir ../fixtures/helpers.sql
begin;
select plan(6);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1', max_attempts => 1, priority => 9)).job_id as spent \gset
select (ai.enqueue_job('qa2')).job_id as other \gset
set local role app_service;
select is((select job_id from ai.claim_job('w1', '1 minute')), :spent::bigint, 'the one-attempt job is claimed');
select set_config('ai.frozen_now', '2030-01-01 00:05:00+00', true) is not null as moved \gset
select is((select job_id from ai.claim_job('w2', '1 minute')), :other::bigint, 'its lease expired with no attempt left: the claim moves on to the next job');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
create temp table s on commit drop as select * from ai.agent_jobs where job_id = :spent;
select is(status, 'FAILED', 'the spent job is FAILED') from s;
select is((attempts, lease_owner, lease_expires_at, finished_at), (1, null::text, null::timestamptz, '2030-01-01 00:05:00+00'::timestamptz), 'one attempt, no lease, finished now') from s;
select is(last_error, 'the lease of attempt 1 expired', 'last_error says why') from s;
select is(fencing_token, 2::bigint, 'its token moved on, so the dead attempt stays fenced out') from s;

select * from finish();
rollback;
