\ir ../fixtures/helpers.sql
begin;
select plan(5);

set local role tenant_a;
select ai.create_session('t-taken', '{"who": "a"}');

set local role tenant_b;
select throws_ok($$select ai.create_session('t-taken')$$, 'AS005', 'thread id t-taken is not available',
                 'tenant_b cannot create a session with tenant_a''s id');

set local role app_service;
select ai.act_as('user-42');
select throws_ok($$select ai.create_session('t-taken')$$, 'AS005', 'thread id t-taken is not available',
                 'a service acting for another owner cannot either');

reset role;
select is((select owner from ai.agent_sessions where thread_id = 't-taken'), 'tenant_a', 'still owned by tenant_a');
select is((select config from ai.agent_sessions where thread_id = 't-taken'), '{"who": "a"}'::jsonb, 'config unchanged');
select is((select count(*)::int from ai.session_events where thread_id = 't-taken'), 1, 'no extra event');

select * from finish();
rollback;
