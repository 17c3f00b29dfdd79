\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_b;
select throws_ok($$insert into ai.agent_sessions (thread_id, owner) values ('t-forged', 'tenant_a')$$, '42501',
                 'permission denied for table agent_sessions', 'a session owned by tenant_a: no table privilege');
select throws_ok($$insert into ai.agent_sessions (thread_id) values ('t-own')$$, '42501', null, 'nor its own, raw');
select is((ai.create_session('t-own')).owner, 'tenant_b', 'create_session makes it owned by tenant_b');

select * from finish();
rollback;
