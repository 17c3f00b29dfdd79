\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

set local role tenant_a;
select throws_ok($$select ai.enqueue_job('qa1', headers => '["traceparent"]')$$, 'AS002',
                 'headers must be a JSON object of string values, at most 8192 bytes, or NULL', 'an array');
select throws_ok($$select ai.enqueue_job('qa1', headers => '{"n": 1}')$$, 'AS002',
                 'headers must be a JSON object of string values, at most 8192 bytes, or NULL', 'a number value');
select throws_ok(format('select ai.enqueue_job(%L, headers => %L)', 'qa1', jsonb_build_object('big', repeat('x', 8200))), 'AS002',
                 'headers must be a JSON object of string values, at most 8192 bytes, or NULL', 'over 8 KiB');
select throws_ok($$select ai.enqueue_jobs(array['qa1'], array['{}']::jsonb[], headers => '"x"')$$, 'AS002',
                 'headers must be a JSON object of string values, at most 8192 bytes, or NULL', 'enqueue_jobs too');

select * from finish();
rollback;
