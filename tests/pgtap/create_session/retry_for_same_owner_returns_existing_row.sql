\ir ../fixtures/helpers.sql
begin;
select plan(4);

set local role tenant_a;
select ai.create_session('t-retry', '{"model": "a"}');

reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.agent_sessions where thread_id = 't-retry'), 1, 'one session row');
set local role tenant_a;
select is((ai.create_session('t-retry', '{"model": "b"}')).config, '{"model": "a"}'::jsonb,
          'a second create returns the existing row unchanged');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.session_events where thread_id = 't-retry' and kind = 'start'), 1,
          'the start event is written once');
select is((select owner from ai.agent_sessions where thread_id = 't-retry'), 'tenant_a', 'owned by the caller');
set local role tenant_a;

select * from finish();
rollback;
