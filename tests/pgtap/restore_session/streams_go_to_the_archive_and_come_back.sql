\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select ai.create_session('stream-done') is not null as created \gset
select ai.open_stream('stream-done', 's1') is not null as opened \gset
select ai.append_stream_chunks('stream-done', 's1', 1, array['a', 'b']) as last \gset
select ai.finish_stream('stream-done', 's1') is not null as finished \gset
select ai.set_session_status('stream-done', 'completed') is not null as completed \gset
set local ai.frozen_now = '2030-04-11 00:00:00+00';
set local role app_service;
select count(*) from ai.archive_sessions('90 days');
reset role;
select is((select sum(cardinality(chunks))::int from ai_archive.stream_batches where thread_id = 'stream-done'), 2, 'chunks archived');
set local role app_service;
select (ai.restore_session('stream-done')).status;
set local role tenant_a;
select is((ai.get_stream('stream-done', 's1')).status, 'finished', 'the stream is back');
select results_eq($$select content from ai.read_stream('stream-done', 's1')$$, array['a', 'b'], 'with its chunks');

select * from finish();
rollback;
