\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(4);
set local role tenant_a;
select ai.put_checkpoint('t-cp', '', 'c1', null, 'test', '\x01', '{}', '{"m": "1"}', channel_values => row(array['m'], array['1'], array['t'], array['\xaa']::bytea[], null)::ai.checkpoint_values);
select pg_temp.put_ckpt('t-cp', 'c2', 'c1');
select pg_temp.put_ckpt('t-cp', 's1', null, 'child:1');
select ai.put_writes('t-cp', '', 'c2', 'task', array[0], array['m'], array['t'], array['\x02']::bytea[]);

select is(ai.copy_thread('t-cp', 't-cp2'), 3, 'three checkpoints copied');
select set_eq($$select checkpoint_ns, checkpoint_id, parent_checkpoint_id from ai.list_checkpoints('t-cp2')$$,
              $$select checkpoint_ns, checkpoint_id, parent_checkpoint_id from ai.list_checkpoints('t-cp')$$,
              'the same checkpoints in every namespace');
select is((select blobs from ai.get_checkpoint('t-cp2', '', 'c1')), array['\xaa']::bytea[], 'with their values');
select is((select write_blobs from ai.get_checkpoint('t-cp2', '', 'c2')), array['\x02']::bytea[], 'and writes');

select * from finish();
rollback;
