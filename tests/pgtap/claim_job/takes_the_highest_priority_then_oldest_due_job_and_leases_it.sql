\ir ../fixtures/helpers.sql
begin;
select plan(6);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1', '{"n": "low"}', priority => 0)).job_id as low \gset
select (ai.enqueue_job('qa2', '{"n": "high"}', priority => 5)).job_id as high \gset
set local role app_service;
create temp table c on commit drop as select * from ai.claim_job('w1', '30 seconds');
select is(job_id, :high::bigint, 'the higher priority job first') from c;
select is(status, 'IN_PROGRESS', 'IN_PROGRESS') from c;
select is((attempts, fencing_token, lease_owner), (1, 1::bigint, 'w1'::text), 'one attempt, token 1, leased to w1') from c;
select is(lease_expires_at, '2030-01-01 00:00:30+00'::timestamptz, 'lease ends at ai.now() + lease') from c;
select is((select job_id from ai.claim_job('w2')), :low::bigint, 'then the other one');
select is((select count(*)::int from ai.claim_job('w3')), 0, 'then nothing');

select * from finish();
rollback;
