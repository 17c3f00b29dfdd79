\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(3);
set local role tenant_a;
select pg_temp.put_ckpt('t-keep', 'c1', null);

set local role tenant_b;
select ok(not ai.delete_thread('t-keep'), 'false for another tenant''s thread');
select ok(not ai.delete_thread('t-unknown'), 'false for an unknown one');
set local role tenant_a;
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.checkpoints where thread_id = 't-keep'), 1, 'nothing was deleted');
set local role tenant_a;

select * from finish();
rollback;
