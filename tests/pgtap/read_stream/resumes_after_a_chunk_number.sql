\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-s');
select ai.open_stream('t-s', 's1');
select ai.append_stream_chunks('t-s', 's1', 1, array['a', 'b', 'c', 'd']);
select results_eq($$select chunk_no, content from ai.read_stream('t-s', 's1', 2)$$,
                  $$values (3, 'c'), (4, 'd')$$, 'after chunk 2');
select results_eq($$select chunk_no from ai.read_stream('t-s', 's1', 0, 2)$$, array[1, 2], 'at most max_chunks');
select throws_ok($$select * from ai.read_stream('t-s', 's1', -1)$$, 'AS002', null, 'negative after_chunk');

select * from finish();
rollback;
