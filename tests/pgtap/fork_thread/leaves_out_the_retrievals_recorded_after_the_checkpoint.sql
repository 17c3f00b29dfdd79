\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);
set local role tenant_a;
select set_config('ai.frozen_now', '2030-01-01 00:00:01+00', true) is not null as t1 \gset
select pg_temp.put_ckpt('t-src', 'c1', null);
select pg_temp.put_ckpt('t-src', 'c2', 'c1');
-- turn 3 was retrieved after c2: it belongs to the steps a replay from c2 runs again
select set_config('ai.frozen_now', '2030-01-01 00:00:02+00', true) is not null as t2 \gset
select ai.record_retrieval('t-src', 3, '[{"id": "doc-3"}]') is not null as r3 \gset
select pg_temp.put_ckpt('t-src', 'c3', 'c2');

select ai.fork_thread('t-src', 'c2', 't-fork') is not null as forked \gset
select is((ai.get_turn_context('t-fork', 3)).retrievals, '[]'::jsonb, 'the fork has no retrieval of turn 3');
select is(jsonb_array_length((ai.get_turn_context('t-src', 3)).retrievals), 1, 'the source keeps it');

select * from finish();
rollback;
