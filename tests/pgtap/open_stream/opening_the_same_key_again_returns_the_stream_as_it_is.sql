\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-s');
select is((ai.open_stream('t-s', 's1')).last_chunk, 0, 'a new stream has no chunk');
select ai.append_stream_chunks('t-s', 's1', 1, array['a', 'b']);
select is((ai.open_stream('t-s', 's1', 'user')).last_chunk, 2, 'reopened: where the writer goes on');
select is((ai.open_stream('t-s', 's1')).role, 'assistant', 'the first open decides the role');

select * from finish();
rollback;
