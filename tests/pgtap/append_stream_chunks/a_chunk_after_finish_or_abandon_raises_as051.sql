\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-s');
select ai.open_stream('t-s', 's1');
select ai.open_stream('t-s', 's2');
select ai.append_stream_chunks('t-s', 's1', 1, array['a']);
select ai.finish_stream('t-s', 's1');
select ai.abandon_stream('t-s', 's2');
select throws_ok($$select ai.append_stream_chunks('t-s', 's1', 2, array['b'])$$, 'AS051', null, 'after finish');
select throws_ok($$select ai.append_stream_chunks('t-s', 's2', 1, array['b'])$$, 'AS051', null, 'after abandon');

select * from finish();
rollback;
