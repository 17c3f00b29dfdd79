\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

set local role tenant_a;
select throws_ok($$select ai.enqueue_jobs(array['qa1', 'qa1'], array['{}']::jsonb[])$$, 'AS002', null, 'fewer payloads');
select throws_ok($$select ai.enqueue_jobs(array['qa1'], array['{}']::jsonb[], priorities => array[1, 2])$$, 'AS002', null, 'more priorities');
select throws_ok($$select ai.enqueue_jobs(array['qa1'], array['{}']::jsonb[], idempotency_keys => '{}'::text[])$$, 'AS002', null, 'no keys for one job');
select throws_ok($$select ai.enqueue_jobs(null, array['{}']::jsonb[])$$, 'AS002', 'thread_ids and payloads must not be NULL', 'NULL arrays');

select * from finish();
rollback;
