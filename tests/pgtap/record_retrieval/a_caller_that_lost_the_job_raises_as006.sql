\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql
\ir ../fixtures/queue_held.sql

select is((ai.record_retrieval('qa1', 1, '[]', null, :id, :token)).inserted, true, 'the holder records');
select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select throws_ok(format($$select ai.record_retrieval('qa1', 2, '[]', null, %s, %s)$$, :id, :token), 'AS006', null,
                 'after the lease ended');

select * from finish();
rollback;
