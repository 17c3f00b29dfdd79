-- Verify agent-state:sessions on pg
-- (last_seq and current_checkpoint_id too until the change sessions_dead_columns drops them: sqitch
-- verify runs this script on every later state, so it checks what they all have)
select thread_id, owner, status, config, created_at, updated_at, completed_at
from ai.agent_sessions where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.agent_sessions'::regclass);
select 1 / count(*) from pg_catalog.pg_proc
where oid in (pg_catalog.to_regprocedure('ai._check_session_row(text, text, jsonb, bigint, timestamptz)'),
              pg_catalog.to_regprocedure('ai._check_session_row(text, text, jsonb, timestamptz)'));
select 1 / count(*) from pg_catalog.pg_constraint where conname = 'agent_sessions_row_check' and conrelid = 'ai.agent_sessions'::regclass;
