\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(3);
set local role tenant_a;

select is(current_setting('synchronous_commit'), 'on', 'on before');
select ai.put_checkpoint('t-async', '', 'c1', null, 'test', '\x01', step_commit => row(null, null, 'async')::ai.step_commit);
select is(current_setting('synchronous_commit'), 'off', 'off for the rest of this transaction');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.checkpoints where thread_id = 't-async'), 1, 'the checkpoint is written');
set local role tenant_a;

select * from finish();
rollback;
