\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);
set local role tenant_a;
select pg_temp.put_ckpt('t-mine', 'c1', null);

set local role tenant_b;
select throws_ok($$select pg_temp.put_ckpt('t-mine', 'c2', 'c1')$$, 'AS001', 'thread t-mine not found',
                 'a checkpoint for another tenant''s thread is not found');
select throws_ok($$select ai.put_writes('t-mine', '', 'c1', 'task', array[0], array['ch'], array['t'], array['\x01']::bytea[])$$,
                 'AS001', null, 'and so is a write');

select * from finish();
rollback;
