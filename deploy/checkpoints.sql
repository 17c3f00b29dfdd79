-- Deploy agent-state:checkpoints to pg
-- requires: ulid
-- requires: sessions
-- requires: queue
--
-- Checkpoints: "which node of the graph were we on when the process died".
--
-- A checkpoint is one row of ai.checkpoints, keyed by (thread_id, checkpoint_ns, checkpoint_id).
-- checkpoint_ns is '' for the root graph and e.g. 'node:task-id' for a subgraph; checkpoint_id
-- sorts in time order (a ULID from ai.ulid(), or the caller's own time-ordered id such as
-- LangGraph's uuid6), so "latest" is one backward index probe and "before X" a range. The
-- checkpoint itself is opaque bytes in the caller's serialization (`type` names it); the database
-- reads only metadata (jsonb, filterable through a GIN index) and channel_versions.
--
-- Channel values are stored once per version in ai.checkpoint_blobs, keyed by
-- (thread, ns, channel, version): a checkpoint names the versions it sees in channel_versions,
-- and a step that changes one channel writes one blob, not the whole state again.
-- ai.checkpoint_writes holds the pending writes of the tasks run from a checkpoint (what the
-- next step needs when a run dies half-way through a step), idempotent per (task_id, idx).
--
-- Ownership: every row belongs to its session's owner (FK (thread_id, owner) to
-- ai.agent_sessions, on delete cascade), RLS as everywhere. A LangGraph user never calls
-- create_session: the first put_checkpoint/put_writes of an unknown thread creates the session
-- for the caller. ai.delete_thread deletes the session (and so everything the thread owns) and
-- leaves a tombstone in ai.deleted_threads, so a late write from a worker that has not heard of
-- the deletion raises AS020 instead of bringing the thread back.
--
-- Locks: put_checkpoint holds the session row (FOR KEY SHARE; 0.1.0 updated a
-- current_checkpoint_id column there, which the reads now compute) before inserting,
-- delete_thread deletes that row first; a put racing a delete therefore either commits before it
-- (and is deleted with it) or sees the tombstone.
begin;

insert into ai.error_codes (sqlstate, name, description) values
  ('AS020', 'thread_deleted', 'The thread was deleted with ai.delete_thread: a late checkpoint or write cannot bring it back.');

-- The rules of a row (the CHECK of ai.checkpoints is one call of this function): raises 23514
-- naming the rule; true when none is broken.
create function ai._check_checkpoint_row(metadata jsonb, channel_versions jsonb)
returns boolean
language plpgsql immutable parallel safe
as $$
begin
  if pg_catalog.jsonb_typeof(metadata) is distinct from 'object' or pg_catalog.jsonb_typeof(channel_versions) is distinct from 'object' then
    raise exception using errcode = '23514', constraint = 'checkpoints_row_check',
      message = 'a checkpoint''s metadata and channel_versions are JSON objects';
  end if;
  return true;
end
$$;
-- 0.1.0's comment, not true: the CHECK calls the function for every row. The change
-- comments_0_2 sets the current one (a released table change is not edited).
comment on function ai._check_checkpoint_row(jsonb, jsonb) is
  'Internal: called by the CHECK of ai.checkpoints rows only for a row that breaks a rule (metadata and channel_versions are JSON objects); raises 23514 naming it, true when none is broken.';

revoke execute on function ai._check_checkpoint_row(jsonb, jsonb) from public;
-- internal helpers (ai._*): no EXECUTE grant; only the schema owner's functions call them

create table ai.checkpoints (
  thread_id text not null,
  checkpoint_ns text collate "C" not null default '',
  checkpoint_id text collate "C" not null,
  owner text not null,
  parent_checkpoint_id text collate "C",
  type text not null,
  checkpoint bytea not null,
  metadata jsonb not null default '{}',
  channel_versions jsonb not null default '{}',
  created_at timestamptz not null default ai.now(),
  primary key (thread_id, checkpoint_ns, checkpoint_id),
  foreign key (thread_id, owner) references ai.agent_sessions (thread_id, owner) on delete cascade,
  -- The rules of a row (deploy/schema.sql, "Row rules"): never NULL, as both columns are NOT NULL.
  constraint checkpoints_row_check check (ai._check_checkpoint_row(metadata, channel_versions))
);
comment on table ai.checkpoints is 'One row per checkpoint of a graph run: opaque serialized state, metadata, the channel versions it sees, its parent.';
comment on column ai.checkpoints.checkpoint is 'The checkpoint in the caller''s serialization (named by type), without the channel values stored in ai.checkpoint_blobs.';
comment on column ai.checkpoints.channel_versions is 'channel -> version: which row of ai.checkpoint_blobs holds each channel''s value for this checkpoint.';

-- descendants (checkpoint_lineage 'descendants') walk parent -> children
create index checkpoints_parent on ai.checkpoints (thread_id, checkpoint_ns, parent_checkpoint_id);
-- checkpoints_between and idle-thread pruning
create index checkpoints_created on ai.checkpoints (thread_id, created_at);
-- list_checkpoints' metadata filter and delete_for_runs (metadata @> '{"run_id": ...}')
create index checkpoints_metadata on ai.checkpoints using gin (metadata jsonb_path_ops);

create table ai.checkpoint_blobs (
  thread_id text not null,
  checkpoint_ns text collate "C" not null default '',
  channel text collate "C" not null,
  version text collate "C" not null,
  owner text not null,
  type text not null,
  blob bytea,
  primary key (thread_id, checkpoint_ns, channel, version),
  foreign key (thread_id, owner) references ai.agent_sessions (thread_id, owner) on delete cascade
);
comment on table ai.checkpoint_blobs is 'Channel values, once per (thread, namespace, channel, version); checkpoints reference them through channel_versions.';

create table ai.checkpoint_writes (
  thread_id text not null,
  checkpoint_ns text collate "C" not null default '',
  checkpoint_id text collate "C" not null,
  task_id text collate "C" not null,
  idx integer not null,
  owner text not null,
  channel text not null,
  type text not null,
  blob bytea not null,
  task_path text collate "C" not null default '',
  primary key (thread_id, checkpoint_ns, checkpoint_id, task_id, idx),
  foreign key (thread_id, owner) references ai.agent_sessions (thread_id, owner) on delete cascade
);
comment on table ai.checkpoint_writes is 'Pending writes of the tasks run from a checkpoint, one per (task_id, idx); negative idx are the special channels (error, interrupt, ...), which a retry overwrites.';

-- Checkpoints, channel values and pending writes are compressed with pglz, named here rather than
-- left to the server's default_toast_compression, so that it holds on a server whose default is
-- lz4. Measured by the capacity bench (bench/capacity.sh, a fleet of durable runs, A/B in one
-- run): with LZ4 the database wrote 32-41 % more WAL per node step (the TOAST of
-- checkpoint_blobs, i.e. the growing message list: 9.5 KB per step against 5.3 KB with pglz) and
-- stored 38 % more per run, while pglz costs 14-19 % more server CPU per node step at 50-200 runs.
-- WAL is what a primary writes, ships to replicas and archives; docs/benchmarks.md has the
-- figures. Postgres compresses nothing in a row under ~2 KB, so this matters for channel values
-- only. The archive twins (ai_archive) keep the server's default.
alter table ai.checkpoints alter column checkpoint set compression pglz;
alter table ai.checkpoint_blobs alter column blob set compression pglz;
alter table ai.checkpoint_writes alter column blob set compression pglz;

-- The one table without a session to reference: the session is gone, that is the point.
create table ai.deleted_threads (
  thread_id text not null,
  owner text not null,
  deleted_at timestamptz not null default ai.now(),
  primary key (thread_id, owner)
);
comment on table ai.deleted_threads is 'Tombstones left by ai.delete_thread: a checkpoint or write for one of these threads raises AS020 instead of re-creating it.';

alter table ai.checkpoints enable row level security;
alter table ai.checkpoints force row level security;
create policy checkpoints_by_owner on ai.checkpoints
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));
alter table ai.checkpoint_blobs enable row level security;
alter table ai.checkpoint_blobs force row level security;
create policy checkpoint_blobs_by_owner on ai.checkpoint_blobs
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));
alter table ai.checkpoint_writes enable row level security;
alter table ai.checkpoint_writes force row level security;
create policy checkpoint_writes_by_owner on ai.checkpoint_writes
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));
alter table ai.deleted_threads enable row level security;
alter table ai.deleted_threads force row level security;
create policy deleted_threads_by_owner on ai.deleted_threads
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));

-- A row of ai.checkpoint_lineage: it names the checkpoint as every checkpoint row does
-- (checkpoint_id, parent_checkpoint_id); a type rather than RETURNS TABLE, whose columns could not
-- share the function's argument name.
create type ai.lineage_step as (
  checkpoint_id text,
  parent_checkpoint_id text,
  depth integer,
  created_at timestamptz,
  metadata jsonb
);
comment on type ai.lineage_step is 'One row of ai.checkpoint_lineage: a checkpoint along a parent chain (or below one), at its distance.';

-- ---------------------------------------------------------------------------------------------
-- Reading. get_checkpoint and list_checkpoints return the same row: the checkpoint, the values
-- of the channel versions it names, and its pending writes in (task_path, task_id, idx) order.

create type ai.checkpoint_tuple as (
  thread_id text,
  checkpoint_ns text,
  checkpoint_id text,
  parent_checkpoint_id text,
  type text,
  checkpoint bytea,
  metadata jsonb,
  channel_versions jsonb,
  created_at timestamptz,
  blob_channels text[],
  blob_types text[],
  blobs bytea[],
  write_task_ids text[],
  write_task_paths text[],
  write_idx integer[],
  write_channels text[],
  write_types text[],
  write_blobs bytea[]
);
comment on type ai.checkpoint_tuple is 'A checkpoint with its channel values (blob_*) and pending writes (write_*), as get_checkpoint and list_checkpoints return it.';

-- No table privilege for ai_user or ai_service: they reach this table only through the functions,
-- which run as the schema owner (SECURITY DEFINER; docs/security.md).

commit;
