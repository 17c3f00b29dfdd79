-- Verify agent-state:metrics_indexes on pg

select 1 / count(*) from pg_catalog.pg_indexes where schemaname = 'ai' and indexname = 'agent_jobs_troubled';
select 1 / count(*) from pg_catalog.pg_indexes where schemaname = 'ai' and indexname = 'side_effects_taken_over';
