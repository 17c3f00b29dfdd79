\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as id \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as token \gset

select set_config('ai.frozen_now', '2030-01-01 00:00:20+00', true) is not null as moved \gset
create temp table r on commit drop as select * from ai.release_job(:id, :token);
select is((status, attempts, run_at), ('PENDING'::text, 0, '2030-01-01 00:00:20+00'::timestamptz), 'PENDING, due now, the attempt given back') from r;
select is((lease_owner, lease_expires_at), (null::text, null::timestamptz), 'no lease') from r;
select is((select (attempts, fencing_token) from ai.claim_job('w2')), (1, 2::bigint), 'the next claim is attempt 1 again, under a new token');

select * from finish();
rollback;
