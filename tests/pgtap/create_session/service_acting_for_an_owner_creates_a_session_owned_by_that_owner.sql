\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role app_service;
select ai.act_as('user-42');
select is((ai.create_session('t-svc')).owner, 'user-42', 'the session is owned by the acting owner');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select owner from ai.session_events where thread_id = 't-svc' and kind = 'start'), 'user-42', 'so is its start event');
set local role app_service;
select ai.act_as(null);
select is((ai.create_session('t-svc-own')).owner, 'app_service', 'acting for nobody, the service owns what it creates');

select * from finish();
rollback;
