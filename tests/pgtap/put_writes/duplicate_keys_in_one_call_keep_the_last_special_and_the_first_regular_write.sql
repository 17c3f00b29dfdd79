\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(4);
set local role tenant_a;
select pg_temp.put_ckpt('t-dup', 'c1', null);

-- A node that calls interrupt() twice: LangGraph writes two __resume__ writes (same task, idx -4)
-- in one put_writes call. The reference savers (InMemorySaver, PostgresSaver row by row) keep the
-- last of a special channel and the first of a regular one.
select lives_ok(
  $$ select ai.put_writes('t-dup', '', 'c1', 'task-1', array[-4, -4], array['__resume__', '__resume__'],
                          array['t', 't'], array['\x01', '\x02']::bytea[]) $$,
  'two writes of one special (task, idx) in one call do not raise 21000');
select lives_ok(
  $$ select ai.put_writes('t-dup', '', 'c1', 'task-2', array[0, 0, 1], array['a', 'b', 'c'],
                          array['t', 't', 't'], array['\x0a', '\x0b', '\x0c']::bytea[]) $$,
  'two writes of one regular (task, idx) in one call do not raise');
select is((select write_blobs from ai.get_checkpoint('t-dup', '', 'c1')),
          array['\x02', '\x0a', '\x0c']::bytea[],
          'the last special write and the first regular write of each key are kept');
select is((select write_channels from ai.get_checkpoint('t-dup', '', 'c1')),
          array['__resume__', 'a', 'c'], 'one row per (task, idx)');

select * from finish();
rollback;
