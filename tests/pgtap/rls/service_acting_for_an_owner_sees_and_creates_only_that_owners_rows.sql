\ir ../fixtures/helpers.sql
begin;
select plan(9);

\ir ../fixtures/two_tenants.sql

set local role app_service;
select ai.act_as('user-42');
select ai.create_session('t-42');
select ai.append_message_idempotent('t-42', 'user', '"hi"');

select is((ai.get_session('t-42')).owner, 'user-42', 'user-42''s session');
select results_eq($$select distinct owner from ai.get_messages('t-42')$$, array['user-42'], 'user-42''s messages');
select results_eq($$select distinct owner from ai.get_events('t-42')$$, array['user-42'], 'user-42''s events');
select throws_ok($$select ai.get_session('t-a')$$, 'AS001', 'thread t-a not found', 'tenant_a''s thread looks unknown');
select throws_ok($$insert into ai.agent_sessions (thread_id, owner) values ('t-forged', 'tenant_a')$$, '42501',
                 'permission denied for table agent_sessions', 'cannot write the table directly');
select is((ai.create_session('t-42b')).owner, 'user-42', 'creates rows owned by user-42');

select ai.act_as('tenant_a');
select is((ai.get_session('t-a')).owner, 'tenant_a', 'acting for tenant_a it sees tenant_a''s session');
select is((ai.append_message_idempotent('t-a', 'assistant', '"reply"')).seq, 2::bigint, 'and may append to it');

set local role tenant_a;
select results_eq($$select seq from ai.get_messages('t-a')$$, array[1, 2]::bigint[], 'tenant_a sees the service''s message');

select * from finish();
rollback;
