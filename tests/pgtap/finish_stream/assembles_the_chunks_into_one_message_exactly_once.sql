\ir ../fixtures/helpers.sql
begin;
select plan(5);

set local role tenant_a;
select ai.create_session('t-s');
select ai.open_stream('t-s', 's1', 'assistant', 7);
select ai.append_stream_chunks('t-s', 's1', 1, array['Hel', 'lo']);
select ai.append_stream_chunks('t-s', 's1', 3, array[', world']);
select is((ai.finish_stream('t-s', 's1')).content, '"Hello, world"'::jsonb, 'the chunks in order');
select is((ai.finish_stream('t-s', 's1')).inserted, false, 'a second finish returns the same message');
select is((select count(*)::int from ai.get_messages('t-s')), 1, 'one message');
select is((select turn from ai.get_messages('t-s')), 7, 'with the stream''s turn');
select is((ai.get_stream('t-s', 's1')).message_seq, 1::bigint, 'the stream names its message');

select * from finish();
rollback;
