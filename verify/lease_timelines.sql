-- Verify agent-state:lease_timelines on pg

select timeline, first_seen from ai.lease_timelines where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.lease_timelines'::regclass);
