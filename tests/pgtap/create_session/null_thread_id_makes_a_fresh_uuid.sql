\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select (ai.create_session()).thread_id as t1 \gset
select (ai.create_session(null, '{}')).thread_id as t2 \gset
select ok(:'t1' ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', 'the new id is a UUID');
select isnt(:'t1'::text, :'t2'::text, 'each call gets a fresh id');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.agent_sessions where thread_id in (:'t1', :'t2')), 2, 'two sessions');
set local role tenant_a;

select * from finish();
rollback;
