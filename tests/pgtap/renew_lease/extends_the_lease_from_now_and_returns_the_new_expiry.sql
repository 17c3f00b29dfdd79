\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

select set_config('ai.frozen_now', '2030-01-01 00:00:40+00', true) is not null as moved \gset
select is(ai.renew_lease(:id, :token, '1 minute'), '2030-01-01 00:01:40+00'::timestamptz, 'the lease now ends a minute after ai.now()');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select (lease_expires_at, available_at) from ai.agent_jobs where job_id = :id), ('2030-01-01 00:01:40+00'::timestamptz, '2030-01-01 00:01:40+00'::timestamptz), 'stored, and the job is claimable only then');
select is((select (fencing_token, attempts) from ai.agent_jobs where job_id = :id), (:token::bigint, 1), 'same token, same attempt');
set local role app_service;
select set_config('ai.frozen_now', '2030-01-01 00:01:30+00', true) is not null as moved \gset
select is((select count(*)::int from ai.claim_job('w2')), 0, 'past the first lease the renewed job is still held');

select * from finish();
rollback;
