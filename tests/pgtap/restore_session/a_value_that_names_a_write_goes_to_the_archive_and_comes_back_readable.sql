\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(3);

-- A delta stored as a reference to its parent's pending write (checkpoint_blobs.write_*) moves
-- with the thread to the archive and back, the reference kept, the value read whole.
set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select pg_temp.put_list('t-named-archive', 'c1', null, 'v1', '\x920102');
select ai.put_checkpoint('t-named-archive', '', 'c2', 'c1', 'test', '\x01', '{}', '{"m": "v2"}',
  channel_values => row(array['m'], array['v2'], array['msgpack'], array['\x9103'::bytea], array['v1'])::ai.checkpoint_values,
  writes => row('task-1', 'p', array[0], array['m'], array['msgpack'], array['\x9103']::bytea[])::ai.task_writes);
select ai.set_session_status('t-named-archive', 'completed') is not null as completed \gset

set local ai.frozen_now = '2030-04-11 00:00:00+00';
set local role app_service;
select count(*) from ai.archive_sessions('90 days');
reset role;
select is((select row(blob, write_checkpoint_id, write_task_id, write_idx)::text from ai_archive.checkpoint_blobs
           where thread_id = 't-named-archive' and version = 'v2'),
          row(null::bytea, 'c1', 'task-1', 0)::text, 'the archive holds the reference');
set local role app_service;
select (ai.restore_session('t-named-archive')).status;
reset role;
select is((select write_task_id from ai.checkpoint_blobs where thread_id = 't-named-archive' and version = 'v2'),
          'task-1', 'and the restored value names the write again');
set local role tenant_a;
select is(pg_temp.list_value('t-named-archive', 'c2'), '\x93010203'::bytea, 'and reads whole');

select * from finish();
rollback;
