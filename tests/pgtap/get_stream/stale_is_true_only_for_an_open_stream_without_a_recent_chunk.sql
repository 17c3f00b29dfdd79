\ir ../fixtures/helpers.sql
begin;
select plan(4);

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select ai.create_session('t-s');
select ai.open_stream('t-s', 's1');
select is((ai.get_stream('t-s', 's1', '30 seconds')).stale, false, 'just opened');
set local ai.frozen_now = '2030-01-01 00:01:00+00';
select is((ai.get_stream('t-s', 's1', '30 seconds')).stale, true, 'a minute without a chunk');
select ai.append_stream_chunks('t-s', 's1', 1, array['a']);
select is((ai.get_stream('t-s', 's1', '30 seconds')).stale, false, 'a chunk just came');
select ai.finish_stream('t-s', 's1');
set local ai.frozen_now = '2030-01-01 01:00:00+00';
select is((ai.get_stream('t-s', 's1', '30 seconds')).stale, false, 'a finished stream is never stale');

select * from finish();
rollback;
