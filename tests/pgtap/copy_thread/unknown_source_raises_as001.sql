\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/checkpoints.sql
select plan(3);
set local role tenant_a;
select pg_temp.put_ckpt('t-a', 'c1', null);

select throws_ok($$select ai.copy_thread('t-none', 't-x')$$, 'AS001', null, 'unknown source');
select throws_ok($$select ai.copy_thread('t-a', 't-a')$$, 'AS005', null, 'a taken target');
set local role tenant_b;
select throws_ok($$select ai.copy_thread('t-a', 't-y')$$, 'AS001', null, 'another tenant''s source');

select * from finish();
rollback;
