\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as id \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as first_token \gset
select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
create temp table c on commit drop as select * from ai.claim_job('w2', '1 minute');
select is(job_id, :id::bigint, 'the dead worker''s job is claimed again once its lease ended') from c;
select is((attempts, lease_owner), (2, 'w2'::text), 'as attempt 2, by w2') from c;
select cmp_ok(fencing_token, '>', :first_token::bigint, 'under a new fencing token') from c;
select is(lease_expires_at, '2030-01-01 00:02:00+00'::timestamptz, 'with a fresh lease') from c;

select * from finish();
rollback;
