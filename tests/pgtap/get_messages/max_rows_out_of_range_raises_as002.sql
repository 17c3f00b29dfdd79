\ir ../fixtures/helpers.sql
begin;
select plan(5);

set local role tenant_a;
select ai.create_session('t-m');
select throws_ok($$select * from ai.get_messages('t-m', 0, 0)$$, 'AS002', 'max_rows must be between 1 and 10000, not 0', 'zero');
select throws_ok($$select * from ai.get_messages('t-m', 0, -5)$$, 'AS002', 'max_rows must be between 1 and 10000, not -5', 'negative');
select throws_ok($$select * from ai.get_messages('t-m', 0, 10001)$$, 'AS002', 'max_rows must be between 1 and 10000, not 10001', 'over the maximum');
select throws_ok($$select * from ai.get_messages('t-m', 0, null)$$, 'AS002', 'max_rows must be between 1 and 10000, not NULL', 'NULL');
select lives_ok($$select * from ai.get_messages('t-m', 0, 10000)$$, 'the maximum itself is fine');

select * from finish();
rollback;
