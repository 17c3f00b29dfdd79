\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as id \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as token \gset

select throws_ok(format('select ai.retry_dead_job(%s)', :id), 'AS004', format('job %s is IN_PROGRESS: only FAILED jobs are retried', :id), 'a running job');
select throws_ok($$select ai.retry_dead_job(-1)$$, 'AS001', 'job -1 not found', 'unknown job');
set local role tenant_a;
select throws_ok(format('select ai.retry_dead_job(%s)', :id), '42501', 'permission denied for function retry_dead_job', 'tenants do not retry dead jobs');

select * from finish();
rollback;
