-- Verify agent-state:archive_thread_indexes on pg
select 1 / (pg_catalog.to_regclass('ai.agent_jobs_thread') is not null)::int;
select 1 / (pg_catalog.to_regclass('ai_archive.agent_jobs_thread') is not null)::int;
