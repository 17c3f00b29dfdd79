-- Deploy agent-state:thread_fences to pg
-- requires: sessions
-- requires: retention
--
-- The fence of a thread, kept with the thread (issue 40, docs/scaling.md, "The fence on the
-- shard"). On one server every write made for a job checks the job's row in ai.agent_jobs
-- (ai._fence), and this table stays empty. On a Citus formation ai.agent_jobs is a table of the
-- coordinator while the thread's rows are on a worker: a check there would make every node step
-- a distributed transaction, and a write delegated to the worker (ai.distribute(), "One node per
-- step") cannot read the coordinator's table at all. So on a formation the claim writes the
-- fence of the job's thread here, in its own transaction (a trigger on ai.agent_jobs that
-- ai.distribute() adds: a claim, a takeover, a job leaving IN_PROGRESS), and the fenced writes
-- check it on the thread's shard (ai._fence_on_formation). Distributed by thread_id and
-- co-located with ai.agent_sessions by ai.distribute(), like every table with a thread_id.
--   job_id, fencing_token: the thread's last claimed job and the token of that claim;
--   held: whether that job is IN_PROGRESS under that claim (false once it completed, failed,
--         was released, cancelled, or waits for a person).
-- The lease expiry is not here: it lives with the job on the coordinator, renewed there without
-- touching the shards.
begin;

create table ai.thread_fences (
  thread_id text primary key,
  owner text not null,
  job_id bigint not null,
  fencing_token bigint not null,
  held boolean not null,
  updated_at timestamptz not null,
  foreign key (thread_id, owner) references ai.agent_sessions (thread_id, owner) on delete cascade
);
comment on table ai.thread_fences is 'Citus only (empty on one server): the fence of a thread, written by the claim on the thread''s shard (its last claimed job, the token, whether that job still runs) and checked there by every write made for a job (docs/scaling.md).';

alter table ai.thread_fences enable row level security;
alter table ai.thread_fences force row level security;
create policy thread_fences_by_owner on ai.thread_fences
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));
-- No table privilege for ai_user or ai_service: only the schema owner's functions read and write it.

-- Retention: the fence moves with its session (a restored thread's fence names a job that no
-- longer runs, or the job that still does).
create table ai_archive.thread_fences (like ai.thread_fences including defaults including constraints including indexes,
  foreign key (thread_id, owner) references ai_archive.agent_sessions (thread_id, owner) on delete cascade);
alter table ai_archive.thread_fences enable row level security;
alter table ai_archive.thread_fences force row level security;
create policy thread_fences_by_owner on ai_archive.thread_fences
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));
insert into ai._archived_tables (table_name, copy_order, order_by) values ('thread_fences', 150, 'thread_id');

commit;
