-- Deploy agent-state:human_in_the_loop to pg
-- requires: queue
-- requires: checkpoints
-- requires: retention
--
-- Human in the loop: pause a job for a person, resume it days later
-- ===================================================================
-- A worker that needs a person's approval does not wait for one. It writes its checkpoint and
-- calls ai.request_human(job_id, fencing_token, checkpoint_id, action), fenced like every write
-- for a job: the job goes to AWAITING_HUMAN (no lease, no worker, the attempt given back), the
-- session to 'waiting', a row in ai.human_approvals and a pending_approval event record the
-- staged action and the checkpoint to resume from. The worker moves on to other jobs.
--
-- Later (minutes or days) the session's owner, or a service acting for it, calls
-- ai.resolve_human(thread_id, checkpoint_id, decision): the decision is stored with who decided
-- and when, a human_resolved event is written, the session is 'active' again, and the job goes
-- back to PENDING, due now, its payload carrying the decision under the key "human". The next
-- claim, by any worker in any process, resumes from that checkpoint with the person's input.
-- A wait of three days and a crash of three days look the same to the queue: a gap between a
-- checkpoint write and the next claim.
--
-- resolve_human changes nothing and raises when
--   AS032 nothing waits (no pending approval, the job was cancelled, the session is not waiting)
--   AS033 that checkpoint's approval was already resolved (a second click, a retried request)
--   AS034 the checkpoint is stale: the thread has a newer checkpoint than the one paused on
--   AS007 a service acting for nobody: a decision belongs to an owner (use ai.act_as)
--
-- Cancelling a job that waits for a person ends the wait, however the status is written
-- (ai.cancel_job, or a raw UPDATE to CANCELLED, which the queue's status guard allows a tenant):
--   job       AWAITING_HUMAN -> CANCELLED
--   approval  pending -> cancelled   decision NULL; decided_at = when; decided_by = the role that
--                                    cancelled; decided_for = the owner it acted for (NULL for a
--                                    service acting for nobody)
--   event     approval_cancelled {approval_id, job_id, checkpoint_id, cancelled_by}
--   session   waiting -> active      unless another approval of the thread still waits (the unique
--                                    index human_approvals_one_pending_per_thread allows one pending
--                                    approval per thread, so today none can); a session that is not
--                                    'waiting' (finished meanwhile, say) is left alone
-- The status trigger of ai.agent_jobs (ai._job_status_moved, deploy/queue_functions.sql) calls
-- ai._close_approval_of_job for it. It runs inside the function that moved the job (SECURITY
-- DEFINER, as the schema owner), under the same policies: RLS narrows it to the job's owner,
-- whose job the caller could see and cancel in the first place (an approval and its session
-- always have the job's owner).
--
-- Locks: job, session, approval, in every path. request_human updates the job row, then the
-- session row (set_session_status), then inserts the approval; a cancel holds the job row before
-- its trigger locks the session row (only when it waits), then the approval row; resolve_human
-- locks the job (FOR NO KEY UPDATE, while it is AWAITING_HUMAN), then the session, then the
-- approval. Of a cancel and a resolve of one job, whichever locks the job first wins and the other
-- waits on that row alone: a resolve after a cancel raises AS032 saying the approval was
-- cancelled; a cancel after a resolve cancels a PENDING job, whose approval stays resolved. A
-- claim never touches an AWAITING_HUMAN job.
begin;

insert into ai.error_codes (sqlstate, name, description) values
  ('AS032', 'not_waiting', 'resolve_human for a thread with nothing waiting for a person (no pending approval, the job was cancelled, or the session is not waiting).'),
  ('AS033', 'already_resolved', 'resolve_human for a checkpoint whose approval was already resolved.'),
  ('AS034', 'stale_checkpoint', 'The checkpoint named is not the one the thread waits on: the thread moved on.');

-- The rules of a row, one at a time (the CHECK of ai.human_approvals is one call of this function): raises
-- 23514 naming the first rule broken, a NULL breaking a rule as well; true when none is.
create function ai._check_approval_row(checkpoint_id text, status text, decision jsonb, decided_at timestamptz)
returns boolean
language plpgsql immutable parallel safe
as $$
begin
  if (pg_catalog.char_length(checkpoint_id) between 1 and 255) is not true then
    raise exception using errcode = '23514', constraint = 'human_approvals_row_check',
      message = 'a checkpoint_id has 1 to 255 characters';
  end if;
  if status is null or status not in ('pending', 'resolved', 'cancelled') then
    raise exception using errcode = '23514', constraint = 'human_approvals_row_check',
      message = format('approval status %s is not pending, resolved or cancelled',
                       coalesce(pg_catalog.quote_literal(status), 'NULL'));
  end if;
  if status = 'resolved' and (decision is null or decided_at is null) then
    raise exception using errcode = '23514', constraint = 'human_approvals_row_check',
      message = 'a resolved approval has a decision and decided_at';
  end if;
  if status = 'cancelled' and (decision is not null or decided_at is null) then
    raise exception using errcode = '23514', constraint = 'human_approvals_row_check',
      message = 'a cancelled approval has decided_at and no decision';
  end if;
  return true;
end
$$;
-- 0.1.0's comment, not true: the CHECK calls the function for every row. The change
-- comments_0_2 sets the current one (a released table change is not edited).
comment on function ai._check_approval_row(text, text, jsonb, timestamptz) is
  'Internal: called by the CHECK of ai.human_approvals rows only for a row that breaks a rule (checkpoint_id length, status, a resolved approval''s decision, a cancelled one''s); raises 23514 naming the rule, true when none is broken.';
revoke execute on function ai._check_approval_row(text, text, jsonb, timestamptz) from public;
-- internal helpers (ai._*): no EXECUTE grant; only the schema owner's functions call them

create table ai.human_approvals (
  approval_id text primary key default ai.ulid(),
  thread_id text not null,
  owner text not null,
  job_id bigint not null,
  checkpoint_id text not null,
  action jsonb not null default '{}',
  status text not null default 'pending',
  requested_by text,
  requested_at timestamptz not null,
  decision jsonb,
  decided_by text,
  decided_for text,
  decided_at timestamptz,
  foreign key (thread_id, owner) references ai.agent_sessions (thread_id, owner) on delete cascade,
  -- The rules of a row (deploy/schema.sql, "Row rules"): never NULL, as checkpoint_id and status
  -- are NOT NULL and the others are tested with IS NULL.
  constraint human_approvals_row_check check (ai._check_approval_row(checkpoint_id, status, decision, decided_at))
);
comment on table ai.human_approvals is 'What waits for a person: one row per ai.request_human, pending until ai.resolve_human stores the decision with who decided and when (resolved), or until its job is cancelled (cancelled). See docs/human-in-the-loop.md.';
comment on column ai.human_approvals.decided_by is 'The role that called resolve_human (a tenant, or a service acting for it), or that cancelled the job.';
comment on column ai.human_approvals.decided_for is 'The owner it decided for (ai.current_owner() at the time); for a cancel, NULL when a service acting for nobody cancelled.';
-- One pending approval per thread; the list of what waits, oldest first.
create unique index human_approvals_one_pending_per_thread on ai.human_approvals (thread_id) where status = 'pending';
create index human_approvals_pending on ai.human_approvals (requested_at, approval_id) where status = 'pending';
create index human_approvals_thread on ai.human_approvals (thread_id, checkpoint_id);

alter table ai.human_approvals enable row level security;
alter table ai.human_approvals force row level security;
create policy human_approvals_by_owner on ai.human_approvals
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));
-- No table privilege for ai_user or ai_service: they reach this table only through the functions,
-- which run as the schema owner (SECURITY DEFINER; docs/security.md).

-- Retention: approvals move with their session.
create table ai_archive.human_approvals (like ai.human_approvals including defaults including constraints including indexes,
  foreign key (thread_id, owner) references ai_archive.agent_sessions (thread_id, owner) on delete cascade);
alter table ai_archive.human_approvals enable row level security;
alter table ai_archive.human_approvals force row level security;
create policy human_approvals_by_owner on ai_archive.human_approvals
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));
insert into ai._archived_tables (table_name, copy_order, order_by) values ('human_approvals', 100, 'approval_id');

commit;
