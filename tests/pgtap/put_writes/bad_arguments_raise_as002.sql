\ir ../fixtures/helpers.sql
begin;
select plan(5);
set local role tenant_a;

select throws_ok($$select ai.put_writes('t', '', null, 'task', array[0], array['a'], array['t'], array['\x01']::bytea[])$$,
                 'AS002', null, 'NULL checkpoint_id');
select throws_ok($$select ai.put_writes('t', '', 'c1', '', array[0], array['a'], array['t'], array['\x01']::bytea[])$$,
                 'AS002', null, 'empty task_id');
select throws_ok($$select ai.put_writes('t', '', 'c1', 'task', array[0, 1], array['a'], array['t'], array['\x01']::bytea[])$$,
                 'AS002', null, 'arrays of different lengths');
select throws_ok($$select ai.put_writes('t', '', 'c1', 'task', array[0], array['a'], array['t'], array[null]::bytea[])$$,
                 'AS002', null, 'a NULL value');
select throws_ok($$select ai.put_writes('t', '', 'c1', 'task', array[0], array['a'], array['t'], array['\x01']::bytea[], null)$$,
                 'AS002', null, 'NULL task_path');

select * from finish();
rollback;
