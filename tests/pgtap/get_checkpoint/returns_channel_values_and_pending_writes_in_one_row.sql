\ir ../fixtures/helpers.sql
begin;
select plan(4);
set local role tenant_a;
select ai.put_checkpoint('t-row', '', 'c1', null, 'test', '\x01', '{"step": 0}', '{"a": "1", "b": 2}', channel_values => row(array['a', 'b'], array['1', '2'], array['t', 't'], array['\xaa', '\xbb']::bytea[], null)::ai.checkpoint_values);
select ai.put_writes('t-row', '', 'c1', 'task-b', array[0], array['x'], array['t'], array['\x02']::bytea[], 'p:1');
select ai.put_writes('t-row', '', 'c1', 'task-a', array[0, 1], array['y', 'z'], array['t', 't'], array['\x03', '\x04']::bytea[], 'p:2');

select is((select count(*)::int from ai.get_checkpoint('t-row')), 1, 'one row');
select is((select array_length(blobs, 1) from ai.get_checkpoint('t-row')), 2, 'with both channel values (a number version too)');
select is((select write_task_ids from ai.get_checkpoint('t-row')), array['task-b', 'task-a', 'task-a'],
          'writes in (task_path, task_id, idx) order');
select is((select write_idx from ai.get_checkpoint('t-row')), array[0, 0, 1], 'with their indexes');

select * from finish();
rollback;
