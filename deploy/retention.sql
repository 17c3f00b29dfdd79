-- Deploy agent-state:retention to pg
-- requires: evals
-- requires: queue
-- requires: checkpoints
--
-- Never DELETE without a copy. A finished session (completed, failed or cancelled) older than a
-- cutoff moves, with everything that hangs off it, into schema ai_archive, whose tables have the
-- same columns; ai.restore_session moves it back so it can be replayed. Archived rows keep their
-- owner and the same row level security, so they stay queryable for audit by their tenant.
--
-- One call of ai.archive_sessions is one batch in the caller's transaction: a crash (or a
-- pg_terminate_backend) in the middle rolls the whole batch back, so every session is either
-- wholly hot or wholly archived. It locks only the sessions it picks (FOR UPDATE SKIP LOCKED:
-- one being written is skipped and picked next time); no table lock, nothing the queue waits on.
--
-- The tables that hang off a session are listed in ai._archived_tables, in copy order; a later
-- change that adds such a table creates its twin in ai_archive and registers it. The copy is
-- dynamic SQL over that fixed internal list (identifiers quoted with %I), never over arguments.
begin;

insert into ai.error_codes (sqlstate, name, description) values
  ('AS041', 'not_archivable', 'The session cannot be archived or restored as asked: it is not finished, or a hot session with that id exists.');

create schema ai_archive;
comment on schema ai_archive is 'agent-state: finished sessions and everything they own, moved out of the hot tables by ai.archive_sessions.';
-- No USAGE for ai_user or ai_service: only the schema owner's functions read or write it.

create table ai._archived_tables (
  table_name text primary key,
  copy_order integer not null unique,
  order_by text not null  -- the column that orders a thread's rows (restore inserts in this order)
);
comment on table ai._archived_tables is 'Internal: the tables that hang off a session and move with it to ai_archive, in copy order.';
alter table ai._archived_tables enable row level security;
alter table ai._archived_tables force row level security;
create policy archived_tables_all_rows on ai._archived_tables using (true) with check (true);

insert into ai._archived_tables (table_name, copy_order, order_by) values
  ('session_messages', 10, 'seq'),
  ('session_events', 20, 'event_id'),
  ('eval_runs', 30, 'eval_id'),
  ('agent_jobs', 40, 'job_id'),
  ('agent_jobs_archive', 50, 'job_id'),
  ('checkpoints', 60, 'checkpoint_id'),
  ('checkpoint_blobs', 70, 'version'),
  ('checkpoint_writes', 80, 'checkpoint_id');

-- The twins: the same columns in the same order (LIKE), plain columns where the hot table has an
-- identity (archived rows keep their ids), the children tied to their archived session.
create table ai_archive.agent_sessions (like ai.agent_sessions including defaults including constraints including indexes);
alter table ai_archive.agent_sessions add constraint agent_sessions_thread_owner_key unique (thread_id, owner);
create table ai_archive.session_messages (like ai.session_messages including defaults including constraints including indexes,
  foreign key (thread_id, owner) references ai_archive.agent_sessions (thread_id, owner) on delete cascade);
create table ai_archive.session_events (like ai.session_events including defaults including constraints including indexes,
  foreign key (thread_id, owner) references ai_archive.agent_sessions (thread_id, owner) on delete cascade);
create table ai_archive.eval_runs (like ai.eval_runs including defaults including constraints including indexes,
  foreign key (thread_id, owner) references ai_archive.agent_sessions (thread_id, owner) on delete cascade);
create table ai_archive.agent_jobs (like ai.agent_jobs including defaults including constraints including indexes,
  foreign key (thread_id, owner) references ai_archive.agent_sessions (thread_id, owner) on delete cascade);
create table ai_archive.agent_jobs_archive (like ai.agent_jobs_archive including defaults including constraints including indexes,
  foreign key (thread_id, owner) references ai_archive.agent_sessions (thread_id, owner) on delete cascade);
create table ai_archive.checkpoints (like ai.checkpoints including defaults including constraints including indexes,
  foreign key (thread_id, owner) references ai_archive.agent_sessions (thread_id, owner) on delete cascade);
create table ai_archive.checkpoint_blobs (like ai.checkpoint_blobs including defaults including constraints including indexes,
  foreign key (thread_id, owner) references ai_archive.agent_sessions (thread_id, owner) on delete cascade);
create table ai_archive.checkpoint_writes (like ai.checkpoint_writes including defaults including constraints including indexes,
  foreign key (thread_id, owner) references ai_archive.agent_sessions (thread_id, owner) on delete cascade);
create index agent_sessions_completed on ai_archive.agent_sessions (completed_at);

-- Finding what to archive: finished sessions by completion time. An index of the hot table made
-- here, after the twin above (which has its own on completed_at), so LIKE does not copy it.
create index agent_sessions_finished on ai.agent_sessions (completed_at) where completed_at is not null;

do $$
declare
  t text;
begin
  foreach t in array array['agent_sessions', 'session_messages', 'session_events', 'eval_runs', 'agent_jobs',
                           'agent_jobs_archive', 'checkpoints', 'checkpoint_blobs', 'checkpoint_writes'] loop
    execute format('alter table ai_archive.%I enable row level security', t);
    execute format('alter table ai_archive.%I force row level security', t);
    execute format('create policy %I on ai_archive.%I
                      using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
                      with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))',
                   t || '_by_owner', t);
    -- No grant: archive_sessions and restore_session (SECURITY DEFINER) move the rows.
  end loop;
end
$$;

commit;
