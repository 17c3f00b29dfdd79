\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/queue.sql
\ir ../fixtures/queue_held.sql

select ai.complete_job(:id, :token) is not null as done \gset
select set_config('ai.frozen_now', '2030-01-03 00:00:00+00', true) is not null as moved \gset
select ai.archive_jobs('1 day') as archived \gset
select results_eq(format($$select attempt, outcome from ai.job_attempts(%s)$$, :id),
                  $$values (1, 'completed'::text)$$, 'read from ai.agent_jobs_archive');

select * from finish();
rollback;
