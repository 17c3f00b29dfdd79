\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-s');
select ai.open_stream('t-s', 's1');
select ai.append_stream_chunks('t-s', 's1', 1, array['a']);
select throws_ok($$select ai.append_stream_chunks('t-s', 's1', 3, array['c'])$$, 'AS050', null, 'chunk 2 skipped');
select is((ai.get_stream('t-s', 's1')).last_chunk, 1, 'still one chunk');

select * from finish();
rollback;
