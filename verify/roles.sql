-- Verify agent-state:roles on pg
select 1 / count(*) from pg_catalog.pg_roles where rolname = 'ai_user';
select 1 / count(*) from pg_catalog.pg_roles where rolname = 'ai_service';
select 1 / (pg_catalog.has_schema_privilege('ai_user', 'ai', 'usage'))::int;
