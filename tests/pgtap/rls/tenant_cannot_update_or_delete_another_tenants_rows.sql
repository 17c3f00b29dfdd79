\ir ../fixtures/helpers.sql
begin;
select plan(6);

\ir ../fixtures/two_tenants.sql

set local role tenant_b;
select throws_ok($$update ai.agent_sessions set status = 'failed', completed_at = now() where thread_id = 't-a'$$,
                 '42501', 'permission denied for table agent_sessions', 'tenants may not update sessions');
select throws_ok($$delete from ai.agent_sessions where thread_id = 't-a'$$, '42501',
                 'permission denied for table agent_sessions', 'tenants may not delete sessions');
select throws_ok($$delete from ai.session_messages where thread_id = 't-a'$$, '42501',
                 'permission denied for table session_messages', 'nor messages');
select throws_ok($$delete from ai.session_events where thread_id = 't-a'$$, '42501',
                 'permission denied for table session_events', 'nor events');
reset role;
select is((select status from ai.agent_sessions where thread_id = 't-a'), 'active', '...but it touched no row: tenant_a''s session is unchanged');
select is((select count(*)::int from ai.session_messages where thread_id = 't-a'), 1, 'tenant_a''s message is still there');

select * from finish();
rollback;
