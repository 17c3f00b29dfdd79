\ir ../fixtures/helpers.sql
begin;
select plan(3);

\ir ../fixtures/two_tenants.sql
set local role tenant_a;
select throws_ok($$select ai.hide_last_message('t-b')$$, 'AS001', 'thread t-b not found', 'foreign');
select throws_ok($$select ai.hide_last_message('t-none')$$, 'AS001', 'thread t-none not found', 'unknown');
reset role;
select is((select count(*)::int from ai.hidden_messages), 0, 'nothing hidden');

select * from finish();
rollback;
