\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(6);
set local role tenant_a;
select ai.put_checkpoint('t-src', '', 'c1', null, 'test', '\x01', '{}', '{"m": "1"}', channel_values => row(array['m'], array['1'], array['t'], array['\xaa']::bytea[], null)::ai.checkpoint_values);
select ai.put_checkpoint('t-src', '', 'c2', 'c1', 'test', '\x01', '{}', '{"m": "2"}', channel_values => row(array['m'], array['2'], array['t'], array['\xbb']::bytea[], null)::ai.checkpoint_values);
select ai.put_checkpoint('t-src', '', 'c3', 'c2', 'test', '\x01', '{}', '{"m": "3"}', channel_values => row(array['m'], array['3'], array['t'], array['\xcc']::bytea[], null)::ai.checkpoint_values);
select ai.put_writes('t-src', '', 'c2', 'task', array[0], array['m'], array['t'], array['\x02']::bytea[]);

select is(ai.fork_thread('t-src', 'c2', 't-fork'), 't-fork', 'returns the new thread id');
select is(array(select checkpoint_id from ai.list_checkpoints('t-fork', '')), array['c2', 'c1'], 'c2 and its ancestor, not c3');
select is((select blobs from ai.get_checkpoint('t-fork')), array['\xbb']::bytea[], 'with the values they name');
select is((select write_blobs from ai.get_checkpoint('t-fork')), array['\x02']::bytea[], 'and the pending writes of c2');
select is((ai.get_session('t-fork')).current_checkpoint_id, 'c2', 'the fork''s current checkpoint is c2');
-- a replay on the fork does not touch the source
select pg_temp.put_ckpt('t-fork', 'c9', 'c2');
select is(array(select checkpoint_id from ai.list_checkpoints('t-src', '')), array['c3', 'c2', 'c1'], 'the source is unchanged');

select * from finish();
rollback;
