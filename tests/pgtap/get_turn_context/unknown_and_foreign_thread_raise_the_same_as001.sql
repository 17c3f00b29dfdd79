\ir ../fixtures/helpers.sql
begin;
select plan(3);

\ir ../fixtures/two_tenants.sql
set local role tenant_a;
select throws_ok($$select ai.get_turn_context('t-b', 1)$$, 'AS001', 'thread t-b not found', 'foreign');
select throws_ok($$select ai.get_turn_context('t-none', 1)$$, 'AS001', 'thread t-none not found', 'unknown');
select throws_ok($$select ai.get_turn_context('t-a', null)$$, 'AS002', null, 'NULL turn');

select * from finish();
rollback;
