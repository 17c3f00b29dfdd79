\ir ../fixtures/helpers.sql
begin;
select plan(5);

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select ai.create_session('t-ev');
select (ai.record_event('t-ev', 'tool_call', '{"tool": "search"}')).event_id as e \gset

reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select kind from ai.session_events where event_id = :e), 'tool_call', 'kind stored');
select is((select payload from ai.session_events where event_id = :e), '{"tool": "search"}'::jsonb, 'payload stored');
select is((select owner from ai.session_events where event_id = :e), 'tenant_a', 'owned by the session''s owner');
select is((select created_at from ai.session_events where event_id = :e), '2030-01-01 00:00:00+00'::timestamptz, 'stamped with ai.now()');
set local role tenant_a;
select is((ai.record_event('t-ev', 'step_started')).payload, '{}'::jsonb, 'payload defaults to {}');

select * from finish();
rollback;
