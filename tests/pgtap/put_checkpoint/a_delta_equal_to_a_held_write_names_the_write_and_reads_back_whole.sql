\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(7);
set local role tenant_a;

-- msgpack [1, 2]; then a step whose task wrote [3] to m (held), and whose delta of m is [3]
select pg_temp.put_list('t-named', 'c1', null, 'v1', '\x920102');
select ai.put_checkpoint('t-named', '', 'c2', 'c1', 'test', '\x01', '{}', '{"m": "v2"}',
  channel_values => row(array['m'], array['v2'], array['msgpack'], array['\x9103'::bytea], array['v1'])::ai.checkpoint_values,
  writes => row('task-1', 'p', array[0, 1], array['m', 'n'], array['msgpack', 'msgpack'], array['\x9103', '\x9103']::bytea[])::ai.task_writes);
-- a delta that no write of the parent holds keeps its bytes
select ai.put_checkpoint('t-named', '', 'c3', 'c2', 'test', '\x01', '{}', '{"m": "v3"}',
  channel_values => row(array['m'], array['v3'], array['msgpack'], array['\x9104'::bytea], array['v2'])::ai.checkpoint_values,
  writes => row('task-2', 'p', array[0], array['m'], array['msgpack'], array['\x9105']::bytea[])::ai.task_writes);
select is(pg_temp.list_value('t-named', 'c2'), '\x93010203'::bytea, 'the delta that names the write reads as the whole list');
select is(pg_temp.list_value('t-named', 'c3'), '\x9401020304'::bytea, 'and so does a delta extending it');
select is((select write_blobs from ai.get_checkpoint('t-named', '', 'c1')), array['\x9103', '\x9103']::bytea[],
          'the write is read as written');

reset role;
select is((select row(blob, write_checkpoint_id, write_task_id, write_idx)::text from ai.checkpoint_blobs
           where thread_id = 't-named' and version = 'v2'),
          row(null::bytea, 'c1', 'task-1', 0)::text, 'the delta is stored as a reference to the write of its channel, not its bytes');
select is((select row(blob, write_task_id)::text from ai.checkpoint_blobs where thread_id = 't-named' and version = 'v3'),
          row('\x9104'::bytea, null::text)::text, 'a delta no write equals holds its bytes');
set local role tenant_a;

-- a retried task whose stored write (first written, kept) differs from what this step holds
select ai.put_writes('t-named', '', 'c3', 'task-3', array[0], array['m'], array['msgpack'], array['\x9109']::bytea[], 'p');
select ai.put_checkpoint('t-named', '', 'c4', 'c3', 'test', '\x01', '{}', '{"m": "v4"}',
  channel_values => row(array['m'], array['v4'], array['msgpack'], array['\x9106'::bytea], array['v3'])::ai.checkpoint_values,
  writes => row('task-3', 'p', array[0], array['m'], array['msgpack'], array['\x9106']::bytea[])::ai.task_writes);
select is(pg_temp.list_value('t-named', 'c4'), '\x950102030406'::bytea,
          'a held write that differs from the stored one is not named: the value is its own bytes');
select is((select write_blobs from ai.get_checkpoint('t-named', '', 'c3')), array['\x9109']::bytea[],
          'and the stored write stays as first written');

select * from finish();
rollback;
