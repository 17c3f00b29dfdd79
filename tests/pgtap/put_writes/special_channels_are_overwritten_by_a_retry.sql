\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);
set local role tenant_a;
select pg_temp.put_ckpt('t-err', 'c1', null);

-- LangGraph gives the special channels negative indexes (__error__ -1, __interrupt__ -3, ...)
select ai.put_writes('t-err', '', 'c1', 'task-1', array[-1], array['__error__'], array['t'], array['\x01']::bytea[]);
select is(ai.put_writes('t-err', '', 'c1', 'task-1', array[-1], array['__error__'], array['t'], array['\x02']::bytea[]),
          1, 'a retried error write replaces the first');
select is((select write_blobs from ai.get_checkpoint('t-err', '', 'c1')), array['\x02']::bytea[], 'the newest error wins');

select * from finish();
rollback;
