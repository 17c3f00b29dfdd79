-- Verify agent-state:archive_conflicts on pg
select thread_id from ai_archive.archived_thread_ids where false;
select thread_id, owner, sqlstate, constraint_name, message, first_skipped_at, last_skipped_at, attempts
from ai_archive.archive_skips where false;
select 1 / (pg_catalog.to_regclass('ai_archive.agent_jobs_owner_queue_idempotency_key_idx') is null)::int;
