\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(3);
set local role tenant_a;
select pg_temp.put_ckpt('t-w', 'c1', null);

select is(ai.put_writes('t-w', '', 'c1', 'task-1', array[0, 1], array['a', 'b'], array['t', 't'], array['\x01', '\x02']::bytea[]),
          2, 'two writes stored');
select is(ai.put_writes('t-w', '', 'c1', 'task-1', array[0, 1], array['a', 'b'], array['t', 't'], array['\x09', '\x09']::bytea[]),
          0, 'the same (task, idx) again writes nothing');
select is((select write_blobs from ai.get_checkpoint('t-w', '', 'c1')), array['\x01', '\x02']::bytea[],
          'the first writes are kept');

select * from finish();
rollback;
