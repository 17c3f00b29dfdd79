\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(4);
set local role tenant_a;
select pg_temp.put_ckpt('t-gone', 'c1', null);
select ok(ai.delete_thread('t-gone'), 'the owner deletes the thread');

select throws_ok($$select pg_temp.put_ckpt('t-gone', 'c2', 'c1')$$, 'AS020', null, 'a late checkpoint is refused');
select throws_ok($$select ai.put_writes('t-gone', '', 'c1', 'task', array[0], array['ch'], array['t'], array['\x01']::bytea[])$$,
                 'AS020', null, 'and so is a late write');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.agent_sessions where thread_id = 't-gone'), 0, 'the thread stays deleted');
set local role tenant_a;

select * from finish();
rollback;
