\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

select throws_ok(format('select ai.fail_job(%s, %s, null)', :id, :token), 'AS002', 'error must not be NULL', 'NULL error');
select throws_ok(format('select ai.fail_job(%s, %s, %L, %L)', :id, :token, 'x', '-1 second'), 'AS002', 'retry_in must not be negative, not -00:00:01', 'negative retry_in');

select * from finish();
rollback;
