\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(4);
set local role tenant_a;

select is(pg_temp.put_ckpt('t-new', 'c1', null), 'c1', 'put_checkpoint returns the checkpoint id');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select owner from ai.agent_sessions where thread_id = 't-new'), 'tenant_a', 'the session is created for the caller');
select is((select count(*)::int from ai.session_events where thread_id = 't-new' and kind = 'start'), 1, 'with a start event');
select is((select owner from ai.checkpoints where thread_id = 't-new'), 'tenant_a', 'the checkpoint belongs to the session owner');
set local role tenant_a;

select * from finish();
rollback;
