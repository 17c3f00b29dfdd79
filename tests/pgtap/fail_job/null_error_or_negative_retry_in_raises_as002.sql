\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as id \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as token \gset

select throws_ok(format('select ai.fail_job(%s, %s, null)', :id, :token), 'AS002', 'error must not be NULL', 'NULL error');
select throws_ok(format('select ai.fail_job(%s, %s, %L, %L)', :id, :token, 'x', '-1 second'), 'AS002', 'retry_in must not be negative, not -00:00:01', 'negative retry_in');

select * from finish();
rollback;
