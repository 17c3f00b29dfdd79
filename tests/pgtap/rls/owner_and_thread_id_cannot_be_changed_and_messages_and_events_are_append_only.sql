\ir ../fixtures/helpers.sql
begin;
select plan(5);

\ir ../fixtures/two_tenants.sql

set local role tenant_a;
select throws_ok($$update ai.agent_sessions set owner = 'tenant_b' where thread_id = 't-a'$$, '42501',
                 'permission denied for table agent_sessions', 'a tenant cannot give its session away');
select throws_ok($$update ai.agent_sessions set thread_id = 't-x' where thread_id = 't-a'$$, '42501',
                 'permission denied for table agent_sessions', 'nor rename it');
select throws_ok($$update ai.session_messages set content = '"edited"' where thread_id = 't-a'$$, '42501',
                 'permission denied for table session_messages', 'messages are append-only');
select throws_ok($$update ai.session_events set kind = 'edited' where thread_id = 't-a'$$, '42501',
                 'permission denied for table session_events', 'events are append-only');
select throws_ok($$delete from ai.session_messages where thread_id = 't-a'$$, '42501',
                 'permission denied for table session_messages', 'even its own messages cannot be deleted');

select * from finish();
rollback;
