\ir ../fixtures/helpers.sql
begin;
select plan(4);

set local role tenant_a;
select ai.create_session('t-retry', '{"model": "a"}');

select is((select count(*)::int from ai.agent_sessions where thread_id = 't-retry'), 1, 'one session row');
select is((ai.create_session('t-retry', '{"model": "b"}')).config, '{"model": "a"}'::jsonb,
          'a second create returns the existing row unchanged');
select is((select count(*)::int from ai.session_events where thread_id = 't-retry' and kind = 'start'), 1,
          'the start event is written once');
select is((select owner from ai.agent_sessions where thread_id = 't-retry'), 'tenant_a', 'owned by the caller');

select * from finish();
rollback;
