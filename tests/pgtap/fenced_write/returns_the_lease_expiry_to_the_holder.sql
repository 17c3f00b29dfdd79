\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as id \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as token \gset

select is(ai.fenced_write(:id, :token), '2030-01-01 00:01:00+00'::timestamptz, 'the holder passes and learns how long its lease runs');

select * from finish();
rollback;
