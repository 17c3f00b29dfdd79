\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(3);
set local role tenant_a;
-- turn 1 retrieved before c1 was saved, turn 2 before c2 (same instant: at or before counts)
select set_config('ai.frozen_now', '2030-01-01 00:00:01+00', true) is not null as t1 \gset
select ai.create_session('t-src');
select ai.record_retrieval('t-src', 1, '[{"id": "doc-1", "score": 0.9}]') is not null as r1 \gset
select pg_temp.put_ckpt('t-src', 'c1', null);
select set_config('ai.frozen_now', '2030-01-01 00:00:02+00', true) is not null as t2 \gset
select ai.record_retrieval('t-src', 2, '[{"id": "doc-2"}]', 'search-2') is not null as r2 \gset
select pg_temp.put_ckpt('t-src', 'c2', 'c1');
select set_config('ai.frozen_now', '2030-01-01 00:00:03+00', true) is not null as t3 \gset
select pg_temp.put_ckpt('t-src', 'c3', 'c2');

select ai.fork_thread('t-src', 'c2', 't-fork') is not null as forked \gset
select is((ai.get_turn_context('t-fork', 1)).retrievals, (ai.get_turn_context('t-src', 1)).retrievals,
          'turn 1''s retrievals (recorded before c1) are carried as they are: id, documents, time');
select is((ai.get_turn_context('t-fork', 2)).retrievals, (ai.get_turn_context('t-src', 2)).retrievals,
          'turn 2''s (recorded at the instant c2 was saved) too');
-- the key travels with the row: the same record on the fork is a retry, not a second retrieval
select is((ai.record_retrieval('t-fork', 2, '[{"id": "doc-2"}]', 'search-2')).inserted, false,
          'the carried key makes a re-record on the fork a retry');

select * from finish();
rollback;
