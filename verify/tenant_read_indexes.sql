-- Verify agent-state:tenant_read_indexes on pg

begin;

select 1 / count(*) from pg_catalog.pg_indexes where schemaname = 'ai' and indexname = 'human_approvals_owner_pending';
select 1 / count(*) from pg_catalog.pg_indexes where schemaname = 'ai' and indexname = 'eval_runs_owner_created';

rollback;
