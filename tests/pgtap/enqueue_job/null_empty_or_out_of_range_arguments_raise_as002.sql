\ir ../fixtures/helpers.sql
begin;
select plan(9);
\ir ../fixtures/queue.sql

set local role tenant_a;
select throws_ok($$select ai.enqueue_job(null)$$, 'AS002', 'thread_id must not be NULL', 'NULL thread_id');
select throws_ok($$select ai.enqueue_job('qa1', null)$$, 'AS002', 'payload must not be NULL', 'NULL payload');
select throws_ok($$select ai.enqueue_job('qa1', '{}', '')$$, 'AS002', 'queue must not be empty', 'empty queue');
select throws_ok($$select ai.enqueue_job('qa1', '{}', null)$$, 'AS002', 'queue must not be NULL', 'NULL queue');
select throws_ok($$select ai.enqueue_job('qa1', '{}', repeat('q', 256))$$, 'AS002', 'queue is longer than 255 characters', 'queue too long');
select throws_ok($$select ai.enqueue_job('qa1', '{}', 'default', null, null)$$, 'AS002', 'priority must not be NULL', 'NULL priority');
select throws_ok($$select ai.enqueue_job('qa1', '{}', 'default', null, 0, 0)$$, 'AS002', 'max_attempts must be at least 1, not 0', 'max_attempts 0');
select throws_ok($$select ai.enqueue_job('qa1', '{}', 'default', null, 0, 5, '')$$, 'AS002', 'idempotency_key must not be empty', 'empty idempotency key');
reset role;
select is((select count(*)::int from ai.agent_jobs), 0, 'nothing was written');

select * from finish();
rollback;
