\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-s');
select ai.open_stream('t-s', 's1');
select ai.append_stream_chunks('t-s', 's1', 1, array['a'], null, null, 'async');
select is(current_setting('synchronous_commit'), 'off', 'off for the rest of this transaction');
select ai.append_stream_chunks('t-s', 's1', 2, array['b']);
select is(ai.append_stream_chunks('t-s', 's1', 3, array['c'], null, null, 'sync'), 3, 'sync is the default and stores as well');

select * from finish();
rollback;
