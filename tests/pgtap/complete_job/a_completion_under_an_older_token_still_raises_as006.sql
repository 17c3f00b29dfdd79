\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

-- w1's lease runs out; w2 claims the job (a new token) and completes it. w1's completion, under
-- the older token, is refused: only the holder of the token that completed a job gets it back.
select set_config('ai.frozen_now', '2030-01-01 00:02:00+00', true) is not null as moved \gset
select (ai.claim_job('w2', '1 minute')).fencing_token as token2 \gset
select ai.complete_job(:id, :token2, '{"by": "w2"}') is not null as done \gset
select throws_ok(format('select ai.complete_job(%s, %s, %L)', :id, :token, '{"by": "w1"}'), 'AS006', format('job %s: lease lost', :id), 'the zombie is refused');
select is((ai.get_job(:id)).result, '{"by": "w2"}'::jsonb, 'the result of the holder that completed it stays');

select * from finish();
rollback;
