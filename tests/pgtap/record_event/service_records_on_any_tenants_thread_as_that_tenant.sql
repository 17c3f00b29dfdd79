\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-a');
set local role app_service;
select is((ai.record_event('t-a', 'tool_result')).owner, 'tenant_a', 'the event belongs to the thread''s owner');
select ai.act_as('user-42');
select throws_ok($$select ai.record_event('t-a', 'tool_result')$$, 'AS001', 'thread t-a not found',
                 'acting for another owner, the service cannot record on it');
set local role tenant_a;
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.session_events where thread_id = 't-a' and kind = 'tool_result'), 1, 'tenant_a sees the one event');
set local role tenant_a;

select * from finish();
rollback;
