-- Verify agent-state:sessions on pg
select thread_id, owner, status, config, current_checkpoint_id, last_seq, created_at, updated_at, completed_at
from ai.agent_sessions where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.agent_sessions'::regclass);
select 'ai._check_session_row(text, text, jsonb, bigint, timestamptz)'::regprocedure;
select 1 / count(*) from pg_catalog.pg_constraint where conname = 'agent_sessions_row_check' and conrelid = 'ai.agent_sessions'::regclass;
