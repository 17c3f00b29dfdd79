-- Verify agent-state:usage on pg
select thread_id, usage_id, owner, idempotency_key, model, input_tokens, output_tokens, cost, details, job_id, recorded_at
from ai.usage_records where false;
select thread_id, usage_id from ai_archive.usage_records where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.usage_records'::regclass);
select 1 / count(*)::int from ai._archived_tables where table_name = 'usage_records';
