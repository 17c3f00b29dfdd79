\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

select is(ai.fenced_write(:id, :token), '2030-01-01 00:01:00+00'::timestamptz, 'the holder passes and learns how long its lease runs');

select * from finish();
rollback;
