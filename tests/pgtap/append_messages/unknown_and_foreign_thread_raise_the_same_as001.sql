\ir ../fixtures/helpers.sql
begin;
select plan(2);

\ir ../fixtures/two_tenants.sql
set local role tenant_a;
select throws_ok($$select ai.append_messages('t-b', '[{"role": "user", "content": "x"}]')$$, 'AS001', 'thread t-b not found', 'foreign');
select throws_ok($$select ai.append_messages('t-none', '[{"role": "user", "content": "x"}]')$$, 'AS001', 'thread t-none not found', 'unknown');

select * from finish();
rollback;
