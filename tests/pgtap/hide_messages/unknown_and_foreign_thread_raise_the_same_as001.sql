\ir ../fixtures/helpers.sql
begin;
select plan(2);

\ir ../fixtures/two_tenants.sql
set local role tenant_a;
select throws_ok($$select ai.hide_messages('t-b')$$, 'AS001', 'thread t-b not found', 'foreign');
select throws_ok($$select ai.hide_messages('t-none')$$, 'AS001', 'thread t-none not found', 'unknown');

select * from finish();
rollback;
