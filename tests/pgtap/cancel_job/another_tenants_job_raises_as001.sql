\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as a \gset
set local role tenant_b;
select throws_ok(format('select ai.cancel_job(%s)', :a), 'AS001', format('job %s not found', :a), 'tenant_b cannot cancel tenant_a''s job, nor learn it exists');
select throws_ok($$select ai.cancel_job(-1)$$, 'AS001', 'job -1 not found', 'unknown job: the same error');
reset role;
select is((select status from ai.agent_jobs where job_id = :a), 'PENDING', 'unchanged');

select * from finish();
rollback;
