\ir ../fixtures/helpers.sql
begin;
select plan(1);

set local role tenant_a;
select ai.create_session('t-m');
select throws_ok($$select * from ai.visible_messages('t-m', -1)$$, 'AS002', null, 'negative');

select * from finish();
rollback;
