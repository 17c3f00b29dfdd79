-- Verify agent-state:hot_renewals on pg

-- no index of ai.agent_jobs holds a column a renewal writes (the HOT rule: key columns and predicates)
select 1 / (1 - count(*)::int)
from pg_catalog.pg_index i
where i.indrelid = 'ai.agent_jobs'::regclass
  and (pg_catalog.pg_get_indexdef(i.indexrelid) ~ '(available_at|lease_expires_at|updated_at)'
       or coalesce(pg_catalog.pg_get_expr(i.indpred, i.indrelid), '') ~ '(available_at|lease_expires_at|updated_at)');
-- (both replaced by agent_jobs_claim_fair and agent_jobs_in_flight in job_keys)
select 1 / (pg_catalog.to_regclass('ai.agent_jobs_claim_pending') is not null
          or pg_catalog.to_regclass('ai.agent_jobs_claim_fair') is not null)::int;
select 1 / (pg_catalog.to_regclass('ai.agent_jobs_in_progress') is not null
          or pg_catalog.to_regclass('ai.agent_jobs_in_flight') is not null)::int;
select 1 / (pg_catalog.to_regclass('ai.agent_jobs_claim') is null)::int;
