-- Verify agent-state:events on pg
select thread_id, event_id, owner, kind, payload, created_at from ai.session_events where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.session_events'::regclass);
