\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-a');
set local role app_service;
select is((ai.set_session_status('t-a', 'waiting')).status, 'waiting', 'the service may change a tenant''s session');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select owner from ai.session_events where thread_id = 't-a' and kind = 'status'), 'tenant_a', 'the status event belongs to the tenant');
set local role app_service;
select ai.act_as('user-42');
select throws_ok($$select ai.set_session_status('t-a', 'active')$$, 'AS001', 'thread t-a not found',
                 'acting for another owner, the service cannot');

select * from finish();
rollback;
