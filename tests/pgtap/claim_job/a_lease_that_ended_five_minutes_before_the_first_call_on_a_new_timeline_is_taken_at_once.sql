\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

-- w1's lease ended at 00:01; a standby was promoted (timeline 2) and the queue's first call on it
-- came at 00:06:01, more than five minutes later: longer than the grace covers.
\ir ../fixtures/promoted.sql
select set_config('ai.frozen_now', '2030-01-01 00:06:01+00', true) is not null as moved \gset
select is((select count(*)::int from ai.claim_job('w2', '1 minute')), 1, 'the first claim takes it');
select throws_ok(format('select ai.complete_job(%s, %s)', :id, :token), 'AS006', format('job %s: lease lost', :id), 'the old holder is fenced out');

select * from finish();
rollback;
