\ir ../fixtures/helpers.sql
begin;
select plan(6);

\ir ../fixtures/two_tenants.sql

set local role tenant_b;
set local ai.acting_owner = 'tenant_a';
select is(ai.current_owner(), 'tenant_b', 'tenant_b is still tenant_b');
select throws_ok($$select * from ai.get_messages('t-a')$$, 'AS001', 'thread t-a not found', 'it cannot read tenant_a''s messages');
select throws_ok($$select ai.get_session('t-a')$$, 'AS001', 'thread t-a not found', 'get_session still says not found');
select throws_ok($$select ai.append_message_idempotent('t-a', 'user', '"x"')$$, 'AS001', 'thread t-a not found', 'nor can it append');
select throws_ok($$insert into ai.session_events (thread_id, owner, kind) values ('t-a', 'tenant_a', 'forged')$$, '42501',
                 'permission denied for table session_events', 'nor insert as tenant_a');
select is((ai.create_session('t-spoof')).owner, 'tenant_b', 'what it creates is still its own');

select * from finish();
rollback;
