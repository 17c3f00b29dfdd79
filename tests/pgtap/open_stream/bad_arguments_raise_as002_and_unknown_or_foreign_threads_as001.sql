\ir ../fixtures/helpers.sql
begin;
select plan(5);

\ir ../fixtures/two_tenants.sql
set local role tenant_a;
select throws_ok($$select ai.open_stream('t-a', null)$$, 'AS002', null, 'NULL key');
select throws_ok($$select ai.open_stream('t-a', repeat('k', 201))$$, 'AS002', null, 'key too long');
select throws_ok($$select ai.open_stream('t-a', 'k', 'robot')$$, 'AS002', null, 'unknown role');
select throws_ok($$select ai.open_stream('t-b', 'k')$$, 'AS001', 'thread t-b not found', 'foreign');
select throws_ok($$select ai.open_stream('t-none', 'k')$$, 'AS001', 'thread t-none not found', 'unknown');

select * from finish();
rollback;
