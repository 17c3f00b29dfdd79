-- Verify agent-state:schema on pg
select pg_catalog.has_schema_privilege('ai', 'usage');
