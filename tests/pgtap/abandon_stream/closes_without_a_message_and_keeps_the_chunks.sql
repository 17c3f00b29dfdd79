\ir ../fixtures/helpers.sql
begin;
select plan(4);

set local role tenant_a;
select ai.create_session('t-s');
select ai.open_stream('t-s', 's1');
select ai.append_stream_chunks('t-s', 's1', 1, array['a']);
select is((ai.abandon_stream('t-s', 's1')).status, 'abandoned', 'abandoned');
select is((ai.abandon_stream('t-s', 's1')).status, 'abandoned', 'again: a no-op');
select is_empty($$select * from ai.get_messages('t-s')$$, 'no message');
select results_eq($$select content from ai.read_stream('t-s', 's1')$$, array['a'], 'the chunks stay readable');

select * from finish();
rollback;
