\ir ../fixtures/helpers.sql
begin;
select plan(5);
set local role tenant_a;
select ai.put_checkpoint('t-run', '', 'c1', null, 'test', '\x01', '{"run_id": "r1"}', '{"m": "1"}', channel_values => row(array['m'], array['1'], array['t'], array['\xaa']::bytea[], null)::ai.checkpoint_values);
select ai.put_checkpoint('t-run', '', 'c2', 'c1', 'test', '\x01', '{"run_id": "r2"}', '{"m": "2"}', channel_values => row(array['m'], array['2'], array['t'], array['\xbb']::bytea[], null)::ai.checkpoint_values);
select ai.put_checkpoint('t-run', '', 'c3', 'c2', 'test', '\x01', '{"run_id": "r2"}', '{"m": "2"}', channel_values => row(array[]::text[], array[]::text[], array[]::text[], array[]::bytea[], null)::ai.checkpoint_values);
select ai.put_writes('t-run', '', 'c3', 'task', array[0], array['m'], array['t'], array['\x02']::bytea[]);

select is(ai.delete_for_runs(array['r2', 'r-none']), 2, 'the two checkpoints of r2');
select is(array(select checkpoint_id from ai.list_checkpoints('t-run', '')), array['c1'], 'r1 stays');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.checkpoint_writes where thread_id = 't-run'), 0, 'their writes go');
select is(array(select version from ai.checkpoint_blobs where thread_id = 't-run'), array['1'], 'values nobody names go');
set local role tenant_a;
select is((ai.get_session('t-run')).current_checkpoint_id, 'c1', 'current_checkpoint_id falls back to c1');

select * from finish();
rollback;
