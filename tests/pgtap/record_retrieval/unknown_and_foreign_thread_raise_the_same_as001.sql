\ir ../fixtures/helpers.sql
begin;
select plan(2);

\ir ../fixtures/two_tenants.sql
set local role tenant_a;
select throws_ok($$select ai.record_retrieval('t-b', 1, '[]')$$, 'AS001', 'thread t-b not found', 'foreign');
select throws_ok($$select ai.record_retrieval('t-none', 1, '[]')$$, 'AS001', 'thread t-none not found', 'unknown');

select * from finish();
rollback;
