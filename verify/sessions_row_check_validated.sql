-- Verify agent-state:sessions_row_check_validated on pg
select 1 / (count(*) = 2 and bool_and(c.convalidated))::int
from pg_catalog.pg_constraint c
where c.conname = 'agent_sessions_row_check'
  and c.conrelid in ('ai.agent_sessions'::pg_catalog.regclass, 'ai_archive.agent_sessions'::pg_catalog.regclass);
