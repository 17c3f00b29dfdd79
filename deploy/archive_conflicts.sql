-- Deploy agent-state:archive_conflicts to pg
-- requires: retention
-- requires: queue
-- requires: archive_thread_indexes
--
-- No tenant can stop archiving for the others, nor block a restore (issue 37).
--
-- The rule. A thread id is global (deploy/sessions.sql), and an archived thread keeps its id:
-- until ai.restore_session brings it back, the id stays reserved, as a deleted thread's tombstone
-- keeps a late write from re-creating it. ai_archive.archived_thread_ids holds the archived ids
-- (written by ai.archive_sessions, removed by ai.restore_session, in their transactions); the one
-- place a session is created, ai._start_session, looks there after its insert and treats an
-- archived id as taken (create_session answers AS005, a checkpoint write AS005 for the caller's
-- own archived thread and AS001 for another tenant's, as for a hot id). Looking after the insert
-- closes the race with a sweep: an archive holds the hot row the insert waits on, and commits the
-- reservation with the delete, so the next statement sees it. The table has no owner and no
-- tenant reads it (RLS on, a policy that lets the schema owner's functions see every id, no
-- grant): row level security hides another tenant's archived session from those functions, and
-- the reservation must hold against every tenant.
--
-- A sweep goes on. Whatever a sweep meets that it cannot move (an archived id re-created before
-- this change, a row of a grain that breaks a unique key of the archive), ai.archive_sessions
-- moves the rest of its batch, records the session in ai_archive.archive_skips (the SQLSTATE,
-- the constraint and the message; ai.archive_skips() lists them for the operator), warns, and
-- picks skipped sessions last, so a batch of them ends ai.archive_all_sessions instead of
-- stopping it early or looping; a skipped session is tried again at each sweep and leaves the
-- list when it moves (or when its hot session is gone).
--
-- The archive is history, not a live key space: ai.agent_jobs keeps an idempotency key unique
-- per owner and queue among its own rows only (a finished job moved to ai.agent_jobs_archive
-- frees its key), so the twin ai_archive.agent_jobs must not refuse a second archived job of the
-- same key; its copy of that unique index (LIKE ... INCLUDING INDEXES) goes.
begin;

create table ai_archive.archived_thread_ids (
  thread_id text primary key
);
comment on table ai_archive.archived_thread_ids is
  'Internal: the id of every archived session, reserved until ai.restore_session brings it back (ai._start_session treats it as taken, whoever asks).';
alter table ai_archive.archived_thread_ids enable row level security;
alter table ai_archive.archived_thread_ids force row level security;
-- Every row to the schema owner's functions (the only role with a privilege on it): the
-- reservation holds against every tenant, so it cannot be filtered by owner.
create policy archived_thread_ids_all_rows on ai_archive.archived_thread_ids using (true) with check (true);

-- The ids archived before this change. The schema owner is subject to row level security
-- (FORCE), which would show it no tenant's archived session: lifted for this one statement's
-- transaction, then forced again.
alter table ai_archive.agent_sessions no force row level security;
insert into ai_archive.archived_thread_ids (thread_id) select a.thread_id from ai_archive.agent_sessions a;
alter table ai_archive.agent_sessions force row level security;

create table ai_archive.archive_skips (
  thread_id text primary key,
  owner text not null,
  sqlstate text not null,
  constraint_name text,
  message text not null,
  first_skipped_at timestamptz not null,
  last_skipped_at timestamptz not null,
  attempts integer not null default 1
);
comment on table ai_archive.archive_skips is
  'Finished sessions ai.archive_sessions could not move (the error of the last attempt); tried again last in every sweep, removed once moved. Read with ai.archive_skips().';
alter table ai_archive.archive_skips enable row level security;
alter table ai_archive.archive_skips force row level security;
create policy archive_skips_by_owner on ai_archive.archive_skips
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));

drop index ai_archive.agent_jobs_owner_queue_idempotency_key_idx;

commit;
