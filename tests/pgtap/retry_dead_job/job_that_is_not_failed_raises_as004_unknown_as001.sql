\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

select throws_ok(format('select ai.retry_dead_job(%s)', :id), 'AS004', format('job %s is IN_PROGRESS: only FAILED jobs are retried', :id), 'a running job');
select throws_ok($$select ai.retry_dead_job(-1)$$, 'AS001', 'job -1 not found', 'unknown job');
set local role tenant_a;
select throws_ok(format('select ai.retry_dead_job(%s)', :id), '42501', 'permission denied for function retry_dead_job', 'tenants do not retry dead jobs');

select * from finish();
rollback;
