\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(3);
set local role tenant_a;
select pg_temp.chain('t-prd', 3);

select is(ai.prune_checkpoints(array['t-prd'], 'delete'), 3, 'three checkpoints deleted');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.checkpoints where thread_id = 't-prd'), 0, 'none left');
set local role tenant_a;
select is((ai.get_session('t-prd')).current_checkpoint_id, null, 'the session stays, with no current checkpoint');

select * from finish();
rollback;
