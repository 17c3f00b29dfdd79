\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_b;
select throws_ok($$insert into ai.agent_sessions (thread_id, owner) values ('t-forged', 'tenant_a')$$, '42501',
                 'new row violates row-level security policy for table "agent_sessions"', 'a session owned by tenant_a');
select lives_ok($$insert into ai.agent_sessions (thread_id) values ('t-own')$$, 'a raw insert defaults owner to the caller');
select is((select owner from ai.agent_sessions where thread_id = 't-own'), 'tenant_b', 'and it is owned by tenant_b');

select * from finish();
rollback;
