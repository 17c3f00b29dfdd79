\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select throws_ok(format('select ai.fail_job(%s, %s, %L)', :id, :token, 'late'), 'AS006', format('job %s: lease lost', :id), 'an expired lease cannot fail the job');

select * from finish();
rollback;
