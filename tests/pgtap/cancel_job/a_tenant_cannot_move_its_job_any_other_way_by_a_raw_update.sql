\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/queue.sql

-- Tenants hold UPDATE (status) on their own jobs for cancel_job; the table allows them nothing else.
set local role tenant_a;
select (ai.enqueue_job('qa1', '{}', 'guard-test')).job_id as job \gset
select throws_ok(format($$update ai.agent_jobs set status = 'COMPLETED' where job_id = %s$$, :job), 'AS004',
                 format('job %s cannot go from PENDING to COMPLETED: a tenant may only cancel a job or answer one that waits for a person', :job),
                 'a tenant cannot mark its job completed');
select lives_ok(format($$select ai.cancel_job(%s)$$, :job), 'it may cancel it');
select throws_ok(format($$update ai.agent_jobs set status = 'PENDING' where job_id = %s$$, :job), 'AS004', null,
                 'and cannot revive the cancelled job');
select is((select status from ai.agent_jobs where job_id = :job), 'CANCELLED', 'which stays cancelled');
-- Workers are not checked by the guard.
set local role app_service;
select (ai.enqueue_job('qa2', '{}', 'guard-test')).job_id as job2 \gset
select lives_ok($$select ai.claim_job('w1', '60 seconds', 'guard-test')$$, 'a worker claims as before');

select * from finish();
rollback;
