\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-m');
select throws_ok($$select * from ai.get_messages('t-m', -1)$$, 'AS002', 'after_seq must be 0 or more, not -1', 'negative after_seq');
select throws_ok($$select * from ai.get_messages('t-m', null)$$, 'AS002', 'after_seq must be 0 or more, not NULL', 'NULL after_seq');

select * from finish();
rollback;
