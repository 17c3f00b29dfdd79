-- Verify agent-state:retrievals on pg
select thread_id, retrieval_id, owner, turn, idempotency_key, documents, created_at from ai.turn_retrievals where false;
select thread_id, retrieval_id from ai_archive.turn_retrievals where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.turn_retrievals'::regclass);
select 1 / count(*)::int from ai._archived_tables where table_name = 'turn_retrievals';
