-- Verify agent-state:operator_reads on pg
select 1 / (pg_catalog.to_regclass('ai.agent_sessions_created') is not null)::int;
-- every function of the change pins its search_path
