\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-s');
select ai.open_stream('t-s', 's1');
select ai.append_stream_chunks('t-s', 's1', 1, array['partial']);
select is_empty($$select * from ai.get_messages('t-s')$$, 'get_messages sees no partial message');
select is((ai.context_window('t-s', 1000)).messages, '[]'::jsonb, 'nor does the context window');

select * from finish();
rollback;
