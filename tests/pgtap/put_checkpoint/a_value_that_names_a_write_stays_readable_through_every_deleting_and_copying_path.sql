\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(6);
set local role tenant_a;

-- Per thread: c1 (run <thread>-r1) a whole [1, 2]; c2 (<thread>-r1) whose delta [3] names c1's held write; c3
-- (<thread>-r2) a delta [4] extending it. Every path below deletes or leaves c1's write behind.
create function pg_temp.three_steps(thread_id text) returns void language sql as $$
  select ai.put_checkpoint(thread_id, '', 'c1', null, 'test', '\x01', pg_catalog.jsonb_build_object('run_id', thread_id || '-r1'), '{"m": "v1"}',
    channel_values => row(array['m'], array['v1'], array['msgpack'], array['\x920102'::bytea], array[null])::ai.checkpoint_values);
  select ai.put_checkpoint(thread_id, '', 'c2', 'c1', 'test', '\x01', pg_catalog.jsonb_build_object('run_id', thread_id || '-r1'), '{"m": "v2"}',
    channel_values => row(array['m'], array['v2'], array['msgpack'], array['\x9103'::bytea], array['v1'])::ai.checkpoint_values,
    writes => row('task-1', 'p', array[0], array['m'], array['msgpack'], array['\x9103']::bytea[])::ai.task_writes);
  select ai.put_checkpoint(thread_id, '', 'c3', 'c2', 'test', '\x01', pg_catalog.jsonb_build_object('run_id', thread_id || '-r2'), '{"m": "v3"}',
    channel_values => row(array['m'], array['v3'], array['msgpack'], array['\x9104'::bytea], array['v2'])::ai.checkpoint_values);
$$;
select pg_temp.three_steps('t-runs');
select pg_temp.three_steps('t-prune');
select pg_temp.three_steps('t-copy');
select pg_temp.three_steps('t-fork');

select is(ai.delete_for_runs(array['t-runs-r1']), 2, 'delete_for_runs deletes run r1''s checkpoints and their writes');
select is(pg_temp.list_value('t-runs', 'c3'), '\x9401020304'::bytea, 'a kept delta extending a value that named a deleted write reads whole');
select is(ai.prune_checkpoints(array['t-prune'], 'keep_latest'), 2, 'prune keep_latest deletes the older checkpoints');
select is(pg_temp.list_value('t-prune', 'c3'), '\x9401020304'::bytea, 'and the newest reads whole');
select ai.copy_thread('t-copy', 't-copy-2');
select ai.delete_thread('t-copy');
select is(pg_temp.list_value('t-copy-2', 'c3'), '\x9401020304'::bytea, 'a copy reads whole after its source is deleted');
select ai.fork_thread('t-fork', 'c3', 't-fork-2');
select is(pg_temp.list_value('t-fork-2', 'c3'),
          '\x9401020304'::bytea, 'a fork of the newest checkpoint, without the writes of its ancestors, reads whole');

select * from finish();
rollback;
