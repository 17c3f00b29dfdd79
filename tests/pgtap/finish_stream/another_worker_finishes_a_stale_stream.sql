\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql
\ir ../fixtures/queue_held.sql

select ai.open_stream('qa1', 's1', 'assistant', null, :id, :token);
select ai.append_stream_chunks('qa1', 's1', 1, array['before the crash'], :id, :token);
-- The writer dies; its lease runs out and another worker claims the job again.
select set_config('ai.frozen_now', '2030-01-01 00:02:00+00', true) is not null as moved \gset
select is((ai.get_stream('qa1', 's1', '1 minute')).stale, true, 'no chunk for 2 minutes: stale');
select (ai.claim_job('w2', '1 minute')).fencing_token as token2 \gset
select is((ai.finish_stream('qa1', 's1', :id, :token2)).content, '"before the crash"'::jsonb, 'the new holder finishes it');
select throws_ok(format($$select ai.finish_stream('qa1', 's1', %s, %s)$$, :id, :token), 'AS006', null, 'the dead writer''s token is refused');

select * from finish();
rollback;
