\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select throws_ok($$select ai.enqueue_job('nope')$$, 'AS001', 'thread nope not found', 'unknown thread');
select throws_ok($$select ai.enqueue_job('qb1')$$, 'AS001', 'thread qb1 not found', 'tenant_b''s thread looks the same');
reset role;
select is((select count(*)::int from ai.agent_jobs), 0, 'nothing was written');

select * from finish();
rollback;
