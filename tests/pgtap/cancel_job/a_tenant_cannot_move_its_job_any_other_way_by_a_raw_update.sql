\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/queue.sql

-- Tenants hold no privilege on the table: ai.cancel_job is their one way to move a job.
set local role tenant_a;
select (ai.enqueue_job('qa1', '{}', 'guard-test')).job_id as job \gset
select throws_ok(format($$update ai.agent_jobs set status = 'COMPLETED' where job_id = %s$$, :job), '42501',
                 'permission denied for table agent_jobs',
                 'a tenant cannot mark its job completed');
select lives_ok(format($$select ai.cancel_job(%s)$$, :job), 'it may cancel it');
select throws_ok(format($$update ai.agent_jobs set status = 'PENDING' where job_id = %s$$, :job), '42501', null,
                 'and cannot revive the cancelled job');
select is((ai.get_job(:job)).status, 'CANCELLED', 'which stays cancelled');
-- Workers are not checked by the guard.
set local role app_service;
select (ai.enqueue_job('qa2', '{}', 'guard-test')).job_id as job2 \gset
select lives_ok($$select ai.claim_job('w1', '60 seconds', 'guard-test')$$, 'a worker claims as before');

select * from finish();
rollback;
