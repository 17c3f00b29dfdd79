\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

-- A retry of a completion whose answer was lost: the same token, the job already COMPLETED.
select ai.complete_job(:id, :token, '{"n": 1}') is not null as done \gset
select set_config('ai.frozen_now', '2030-01-01 00:05:00+00', true) is not null as moved \gset
create temp table again on commit drop as select * from ai.complete_job(:id, :token, '{"n": 2}');
select is(status, 'COMPLETED', 'the retry answers with the completed job') from again;
select is(result, '{"n": 1}'::jsonb, 'its first result, unchanged') from again;
select is(finished_at, '2030-01-01 00:00:00+00'::timestamptz, 'finished when it was first completed') from again;
select is((select count(*)::int from ai.job_attempts(:id) where outcome = 'completed'), 1, 'one completed attempt');

select * from finish();
rollback;
