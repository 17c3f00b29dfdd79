\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(2);
set local role tenant_a;

select pg_temp.put_ckpt('t-again', 'c1', null, '', '{"step": 1}');
select pg_temp.put_ckpt('t-again', 'c1', null, '', '{"step": 2}');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.checkpoints where thread_id = 't-again'), 1, 'still one checkpoint');
select is((select metadata from ai.checkpoints where thread_id = 't-again'), '{"step": 2}'::jsonb, 'with the new content');
set local role tenant_a;

select * from finish();
rollback;
