\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select throws_ok($$select ai.enqueue_jobs(array_fill('qa1'::text, array[5001]), array_fill('{}'::jsonb, array[5001]))$$,
                 'AS003', '5001 jobs in one call: at most 5000', 'the documented maximum is 5000');
select is((select count(*)::int from ai.enqueue_jobs(array_fill('qa1'::text, array[5000]), array_fill('{}'::jsonb, array[5000]))),
          5000, '5000 pass');
reset role;
select is((select count(*)::int from ai.agent_jobs), 5000, 'only those');

select * from finish();
rollback;
