\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-s');
select ai.open_stream('t-s', 's1');
select is(ai.append_stream_chunks('t-s', 's1', 1, array['a', 'b']), 2, 'chunks 1 and 2');
select is(ai.append_stream_chunks('t-s', 's1', 1, array['a', 'b']), 2, 'the same batch again: nothing new');
select is(ai.append_stream_chunks('t-s', 's1', 2, array['b', 'c', 'd']), 4, 'overlapping: only 3 and 4 are new');

select * from finish();
rollback;
