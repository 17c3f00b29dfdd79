\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-a');
set local role app_service;
select is((ai.append_message_idempotent('t-a', 'assistant', '"from worker"')).owner, 'tenant_a', 'the message belongs to the thread''s owner');
select ai.act_as('user-42');
select throws_ok($$select ai.append_message_idempotent('t-a', 'assistant', '"x"')$$, 'AS001', 'thread t-a not found',
                 'acting for another owner, the service cannot append');
set local role tenant_a;
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.session_messages where thread_id = 't-a'), 1, 'tenant_a sees the one message');
set local role tenant_a;

select * from finish();
rollback;
