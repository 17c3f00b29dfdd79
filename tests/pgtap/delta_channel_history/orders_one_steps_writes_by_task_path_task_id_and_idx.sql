\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/delta.sql
select plan(1);
set local role tenant_a;
select pg_temp.delta_chain('t-dh', 3, '{}');
-- d2 gets three more writes from parallel tasks, written in no particular order
select ai.put_writes('t-dh', '', 'd000002', 'zz', array[0, 1], array['ch', 'ch'], array['test', 'test'],
                     array['\x7a30', '\x7a31']::bytea[], '~b');
select ai.put_writes('t-dh', '', 'd000002', 'aa', array[0], array['ch'], array['test'], array['\x6130']::bytea[], '~c');
select ai.put_writes('t-dh', '', 'd000002', 'mm', array[0], array['other'], array['test'], array['\x6d30']::bytea[], '~a');

select is(pg_temp.history('t-dh', 'd000003'), array['w1', 'w2', 'z0', 'z1', 'a0'],
          'writes without a task_path first, then by task_path, task_id, idx; other channels left out');

select * from finish();
rollback;
