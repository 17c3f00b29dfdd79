\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-m');
select throws_ok($$select ai.append_messages('t-m', '{"role": "user", "content": "x"}')$$, 'AS002', null, 'an object');
select throws_ok($$select ai.append_messages('t-m', null)$$, 'AS002', null, 'NULL');
select throws_ok($$select ai.append_messages('t-m', '[1]')$$, 'AS002', null, 'an element that is not an object');

select * from finish();
rollback;
