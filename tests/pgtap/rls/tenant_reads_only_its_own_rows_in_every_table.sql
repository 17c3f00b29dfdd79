\ir ../fixtures/helpers.sql
begin;
select plan(6);

\ir ../fixtures/two_tenants.sql

set local role tenant_a;
select is((ai.get_session('t-a')).owner, 'tenant_a', 'tenant_a reads its session');
select results_eq($$select distinct thread_id from ai.get_messages('t-a')$$, array['t-a'], 'tenant_a reads its messages');
select results_eq($$select distinct thread_id from ai.get_events('t-a')$$, array['t-a'], 'tenant_a reads its events');
set local role tenant_b;
select throws_ok($$select ai.get_session('t-a')$$, 'AS001', 'thread t-a not found', 'tenant_b cannot read tenant_a''s session');
select throws_ok($$select * from ai.get_messages('t-a')$$, 'AS001', 'thread t-a not found', 'tenant_b cannot read tenant_a''s messages');
select throws_ok($$select * from ai.get_events('t-a')$$, 'AS001', 'thread t-a not found', 'tenant_b cannot read tenant_a''s events');

select * from finish();
rollback;
