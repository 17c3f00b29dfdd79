-- Verify agent-state:session_items on pg
select thread_id, seq, owner, hidden_at from ai.hidden_messages where false;
select thread_id, seq, owner, hidden_at from ai_archive.hidden_messages where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.hidden_messages'::regclass);
select 1 / count(*)::int from ai._archived_tables where table_name = 'hidden_messages';
