\ir ../fixtures/helpers.sql
begin;
select plan(2);

\ir ../fixtures/two_tenants.sql
set local role tenant_a;
select throws_ok($$select ai.record_usage('t-b', 'k', 'm', 1, 1, 0)$$, 'AS001', 'thread t-b not found', 'foreign');
select throws_ok($$select ai.record_usage('t-none', 'k', 'm', 1, 1, 0)$$, 'AS001', 'thread t-none not found', 'unknown');

select * from finish();
rollback;
