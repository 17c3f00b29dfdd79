\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

set local role tenant_a;
select ai.enqueue_job('qa1') is not null as queued \gset
reset role;
select throws_ok($$update ai.agent_jobs set status = 'IN_PROGRESS'$$, '23514', null, 'IN_PROGRESS without a lease is refused');
select throws_ok($$update ai.agent_jobs set status = 'RUNNING'$$, '23514', null, 'an unknown status is refused');

select * from finish();
rollback;
