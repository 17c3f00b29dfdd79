-- Verify agent-state:retention on pg
-- (last_seq and current_checkpoint_id too until sessions_dead_columns drops them; verify/sessions.sql)
select thread_id, owner, status, config, created_at, updated_at, completed_at
from ai_archive.agent_sessions where false;
select 1 / count(*) from ai._archived_tables where table_name = 'session_messages';
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai_archive.session_messages'::regclass);
