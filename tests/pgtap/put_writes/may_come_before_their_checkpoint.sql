\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);
set local role tenant_a;

-- a run saves a step's writes in the background: they can commit before the checkpoint does
select is(ai.put_writes('t-early', '', 'c1', 'task-1', array[0], array['a'], array['t'], array['\x01']::bytea[]), 1,
          'writes for a checkpoint not saved yet (of a new thread) are stored');
select pg_temp.put_ckpt('t-early', 'c1', null);
select is((select write_channels from ai.get_checkpoint('t-early', '', 'c1')), array['a'], 'and belong to it once it is');

select * from finish();
rollback;
