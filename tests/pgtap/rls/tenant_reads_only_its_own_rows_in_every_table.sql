\ir ../fixtures/helpers.sql
begin;
select plan(6);

\ir ../fixtures/two_tenants.sql

set local role tenant_a;
select results_eq($$select distinct thread_id from ai.agent_sessions$$, array['t-a'], 'tenant_a reads only its session');
select results_eq($$select distinct thread_id from ai.session_messages$$, array['t-a'], 'tenant_a reads only its messages');
select results_eq($$select distinct thread_id from ai.session_events$$, array['t-a'], 'tenant_a reads only its events');
set local role tenant_b;
select is_empty($$select * from ai.agent_sessions where thread_id = 't-a'$$, 'tenant_b cannot read tenant_a''s session');
select is_empty($$select * from ai.session_messages where thread_id = 't-a'$$, 'tenant_b cannot read tenant_a''s messages');
select is_empty($$select * from ai.session_events where thread_id = 't-a'$$, 'tenant_b cannot read tenant_a''s events');

select * from finish();
rollback;
