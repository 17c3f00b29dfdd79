-- Verify agent-state:fork_index on pg

begin;

select 1 / count(*) from pg_catalog.pg_indexes where schemaname = 'ai' and indexname = 'session_events_copied_from';

rollback;
