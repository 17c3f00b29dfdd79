\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql
\ir ../fixtures/queue_held.sql

select is((ai.open_stream('qa1', 's1', 'assistant', null, :id, :token)).status, 'open', 'the holder opens');
select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select throws_ok(format($$select ai.append_stream_chunks('qa1', 's1', 1, array['a'], %s, %s)$$, :id, :token), 'AS006', null,
                 'after the lease ended');

select * from finish();
rollback;
