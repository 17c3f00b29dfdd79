-- Verify agent-state:sessions on pg
select thread_id, owner, status, config, current_checkpoint_id, last_seq, created_at, updated_at, completed_at
from ai.agent_sessions where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.agent_sessions'::regclass);
select 'ai.get_session(text)'::regprocedure;
