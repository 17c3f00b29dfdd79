\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-s');
select ai.open_stream('t-s', 's1');
select ai.append_stream_chunks('t-s', 's1', 1, array[repeat('x', 1000000)]);
select throws_ok($$select ai.append_stream_chunks('t-s', 's1', 2, array[repeat('y', 100000)])$$, 'AS003', null, 'past 1 MiB in all');
select is((ai.get_stream('t-s', 's1')).last_chunk, 1, 'the chunk over the limit was not stored');

select * from finish();
rollback;
