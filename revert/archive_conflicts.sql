-- Revert agent-state:archive_conflicts from pg
-- The unique index comes back as LIKE made it; it fails (and the revert with it) while two
-- archived jobs of one owner and queue share an idempotency key, which this change allowed.
begin;

create unique index agent_jobs_owner_queue_idempotency_key_idx on ai_archive.agent_jobs (owner, queue, idempotency_key)
  where idempotency_key is not null;
drop table ai_archive.archive_skips;
drop table ai_archive.archived_thread_ids;

commit;
