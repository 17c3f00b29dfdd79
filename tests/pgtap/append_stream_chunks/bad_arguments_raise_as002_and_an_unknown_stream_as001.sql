\ir ../fixtures/helpers.sql
begin;
select plan(6);

set local role tenant_a;
select ai.create_session('t-s');
select ai.open_stream('t-s', 's1');
select throws_ok($$select ai.append_stream_chunks('t-s', 's1', 0, array['a'])$$, 'AS002', null, 'chunk 0');
select throws_ok($$select ai.append_stream_chunks('t-s', 's1', 1, array[]::text[])$$, 'AS002', null, 'no chunks');
select throws_ok($$select ai.append_stream_chunks('t-s', 's1', 1, array['a', null])$$, 'AS002', null, 'a NULL chunk');
select throws_ok($$select ai.append_stream_chunks('t-s', 's1', 1, array['a'], 1, null)$$, 'AS002', null, 'a job without a token');
select throws_ok($$select ai.append_stream_chunks('t-s', 'nope', 1, array['a'])$$, 'AS001', null, 'unknown stream');
select throws_ok($$select ai.append_stream_chunks('t-s', 's1', 1, array['a'], null, null, 'later')$$, 'AS002', null, 'unknown durability');

select * from finish();
rollback;
