\ir ../fixtures/helpers.sql
begin;
select plan(4);
select set_config('ai.frozen_now', '2030-01-01 00:00:00+00', true) is not null as frozen \gset

set local role tenant_a;
select (ai.create_session('ls-a')).thread_id as a \gset
select (ai.open_stream('ls-a', 'first')).stream_key as s1 \gset
select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select (ai.open_stream('ls-a', 'second')).stream_key as s2 \gset
select count(*) from ai.append_stream_chunks('ls-a', 'second', 1, array['hel', 'lo']) \gset

select results_eq($$ select stream_key, status, last_chunk, stale from ai.list_streams('ls-a', '30 seconds') $$,
  $$ values ('first'::text, 'open'::text, 0, true), ('second', 'open', 2, false) $$,
  'oldest first, each with its state (the first one, quiet for a minute, is stale)');
select is((select count(*) from ai.list_streams('ls-a', '30 seconds', 1)), 1::bigint, 'at most max_rows');
set local role tenant_b;
select throws_ok($$ select * from ai.list_streams('ls-a') $$, 'AS001', null, 'another tenant''s thread is unknown');
set local role tenant_a;
select throws_ok($$ select * from ai.list_streams('ls-a', null) $$, 'AS002', null, 'a NULL stale_after');

select * from finish();
rollback;
