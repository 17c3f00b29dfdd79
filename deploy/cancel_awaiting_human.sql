-- Deploy agent-state:cancel_awaiting_human to pg
-- requires: human_in_the_loop
--
-- Cancelling a job that waits for a person ends the wait
-- =======================================================
-- Until this change, cancelling an AWAITING_HUMAN job (ai.cancel_job, or a tenant's raw UPDATE to
-- CANCELLED, which the queue's guard allows) left its approval 'pending' and its session
-- 'waiting': the approval dropped out of ai.pending_approvals, ai.resolve_human raised AS032, and
-- nothing ever took the session out of 'waiting'. Now, however the status is written:
--
--   job       AWAITING_HUMAN -> CANCELLED
--   approval  pending -> cancelled   decision NULL; decided_at = when; decided_by = the role that
--                                    cancelled; decided_for = the owner it acted for (NULL for a
--                                    service acting for nobody)
--   event     approval_cancelled {approval_id, job_id, checkpoint_id, cancelled_by}
--   session   waiting -> active      unless another approval of the thread still waits (the unique
--                                    index human_approvals_one_pending_per_thread allows one pending
--                                    approval per thread, so today none can); a session that is not
--                                    'waiting' (finished meanwhile, say) is left alone
--
-- An AFTER UPDATE trigger on ai.agent_jobs does it. It runs inside the function that moved the
-- job (SECURITY DEFINER, as the schema owner), under the same policies: RLS narrows it to the
-- job's owner, whose job the caller could see and cancel in the first place (an approval and its
-- session always have the job's owner).
--
-- Lock order: job, session, approval. The cancelling UPDATE holds the job row before the trigger
-- runs; the trigger then locks the session row (only when it waits), then the approval row, as
-- request_human does (job, session, then the approval insert). resolve_human locked the session,
-- the approval, then the job, which would deadlock against a cancel of the same job, so it is
-- replaced here by one that locks the job first (FOR NO KEY UPDATE, while it is AWAITING_HUMAN),
-- then the session, then the approval. Of a cancel and a resolve of one job, whichever locks the
-- job first wins and the other waits on that row alone: a resolve after a cancel raises AS032
-- saying the approval was cancelled; a cancel after a resolve cancels a PENDING job, whose
-- approval stays resolved. Otherwise resolve_human is unchanged.
--
-- Approvals that cancels before this change left pending are closed the same way here (decided_by
-- NULL, decided_at = the job's finished_at), with their event, and their sessions made active. The
-- deploying role owns the tables but is subject to their forced row level security, so RLS is
-- unforced for that backfill and forced again within this transaction (ACCESS EXCLUSIVE locks on
-- those tables until the deploy commits).
begin;

-- ---------------------------------------------------------------------------------------------
-- The approval status 'cancelled' (also in the archive twin, which copied the constraints)

alter table ai.human_approvals
  drop constraint human_approvals_status_check,
  drop constraint human_approvals_decided,
  add constraint human_approvals_status_check check (status in ('pending', 'resolved', 'cancelled')),
  add constraint human_approvals_decided check (
    status = 'pending'
    or (status = 'resolved' and decision is not null and decided_at is not null)
    or (status = 'cancelled' and decision is null and decided_at is not null));
alter table ai_archive.human_approvals
  drop constraint human_approvals_status_check,
  drop constraint human_approvals_decided,
  add constraint human_approvals_status_check check (status in ('pending', 'resolved', 'cancelled')),
  add constraint human_approvals_decided check (
    status = 'pending'
    or (status = 'resolved' and decision is not null and decided_at is not null)
    or (status = 'cancelled' and decision is null and decided_at is not null));
comment on table ai.human_approvals is 'What waits for a person: one row per ai.request_human, pending until ai.resolve_human stores the decision with who decided and when (resolved), or until its job is cancelled (cancelled). See docs/human-in-the-loop.md.';
comment on column ai.human_approvals.decided_by is 'The role that called resolve_human (a tenant, or a service acting for it), or that cancelled the job (NULL for a cancel made before agent-state recorded it).';
comment on column ai.human_approvals.decided_for is 'The owner it decided for (ai.current_owner() at the time); for a cancel, NULL when a service acting for nobody cancelled.';

-- ---------------------------------------------------------------------------------------------
-- The trigger

create function ai._close_approval_of_job(job_id bigint, thread_id text) returns void
language plpgsql volatile
as $$
#variable_conflict use_column
declare
  a_job_id alias for $1;
  a_thread_id alias for $2;
  v_now timestamptz := ai.now();
  v_session text;
  h ai.human_approvals;
begin
  -- The session before the approval (job, session, approval: the order of request_human and
  -- resolve_human), and only when it waits: a finished session is not touched.
  select s.status into v_session from ai.agent_sessions s where s.thread_id = a_thread_id;
  if v_session = 'waiting' then
    select s.status into v_session from ai.agent_sessions s where s.thread_id = a_thread_id for no key update;
  end if;

  update ai.human_approvals x
  set status = 'cancelled', decided_by = ai.calling_role(),
      decided_for = case when ai.sees_all_owners() then null else ai.current_owner() end,
      decided_at = v_now
  where x.job_id = a_job_id and x.status = 'pending'
  returning x.* into h;
  if not found then
    return;  -- nothing waited (a row written by hand)
  end if;

  insert into ai.session_events (thread_id, owner, kind, payload, created_at)
  values (h.thread_id, h.owner, 'approval_cancelled',
          pg_catalog.jsonb_build_object('approval_id', h.approval_id, 'job_id', h.job_id,
                                        'checkpoint_id', h.checkpoint_id, 'cancelled_by', h.decided_by),
          v_now);
  if v_session = 'waiting'
     and not exists (select from ai.human_approvals x where x.thread_id = h.thread_id and x.status = 'pending') then
    perform ai.set_session_status(h.thread_id, 'active');
  end if;
end
$$;
comment on function ai._close_approval_of_job(bigint, text) is
  'Internal (the status trigger of ai.agent_jobs, after a job went from AWAITING_HUMAN to CANCELLED): the job''s pending approval becomes cancelled (decided_by = ai.calling_role()), an approval_cancelled event is written, and a waiting session is active again when nothing else of the thread waits. Runs inside the function that moved the job.';
revoke execute on function ai._close_approval_of_job(bigint, text) from public;
-- internal helpers (ai._*): no EXECUTE grant; only the schema owner's functions call them

create function ai._close_approval_of_cancelled_job() returns trigger
language plpgsql
as $$
begin
  perform ai._close_approval_of_job(new.job_id, new.thread_id);
  return null;
end
$$;
comment on function ai._close_approval_of_cancelled_job() is
  'Internal trigger (after a job goes from AWAITING_HUMAN to CANCELLED, however written): ai._close_approval_of_job.';
revoke execute on function ai._close_approval_of_cancelled_job() from public;  -- a trigger needs no grant

create trigger agent_jobs_close_approval_on_cancel
  after update of status on ai.agent_jobs
  for each row
  when (old.status = 'AWAITING_HUMAN' and new.status = 'CANCELLED')
  execute function ai._close_approval_of_cancelled_job();

comment on function ai.cancel_job(bigint) is
  'Cancels a PENDING, IN_PROGRESS or AWAITING_HUMAN job and returns it; a worker still running it loses its lease (its next fenced call raises AS006). A job that waited for a person has its approval cancelled and its session active again (a trigger, so a raw UPDATE to CANCELLED does the same). Tenants may cancel their own jobs. AS001 unknown job (or another tenant''s), AS004 job already finished.';

-- ---------------------------------------------------------------------------------------------
-- resolve_human: the job locked first; a cancelled approval named in AS032

create or replace function ai.resolve_human(thread_id text, checkpoint_id text, decision jsonb)
returns ai.human_approvals
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_checkpoint alias for $2;
  a_decision alias for $3;
  v_now timestamptz := ai.now();
  v_job bigint;
  s ai.agent_sessions;
  h ai.human_approvals;
  j ai.agent_jobs;
begin
  perform ai._check_thread_id(a_thread_id);
  perform ai._check_text(a_checkpoint, 'checkpoint_id');
  perform ai._check_document(a_decision, 'decision');
  if ai.sees_all_owners() then
    raise exception using errcode = 'AS007',
      message = 'a decision is made for an owner: a service must act for the session''s owner (ai.act_as)';
  end if;

  -- Locks in the order of a cancel (and its trigger) and of request_human: the job, the session,
  -- the approval. The job is locked only while it waits; a cancel that got it first has closed
  -- the approval by the time the statements below look.
  select x.job_id into v_job from ai.human_approvals x where x.thread_id = a_thread_id and x.status = 'pending';
  if found then
    perform from ai.agent_jobs u where u.job_id = v_job and u.status = 'AWAITING_HUMAN' for no key update;
  end if;
  select * into s from ai.agent_sessions x where x.thread_id = a_thread_id for no key update;
  if not found then
    raise exception using errcode = 'AS001', message = format('thread %s not found', a_thread_id);
  end if;
  select * into h from ai.human_approvals x where x.thread_id = a_thread_id and x.status = 'pending' for update;
  if not found then
    if exists (select from ai.human_approvals x
               where x.thread_id = a_thread_id and x.checkpoint_id = a_checkpoint and x.status = 'resolved') then
      raise exception using errcode = 'AS033',
        message = format('the approval of thread %s at checkpoint %s was already resolved', a_thread_id, a_checkpoint);
    end if;
    select x.job_id into v_job from ai.human_approvals x
    where x.thread_id = a_thread_id and x.checkpoint_id = a_checkpoint and x.status = 'cancelled'
    order by x.decided_at desc, x.approval_id desc
    limit 1;
    if found then
      raise exception using errcode = 'AS032',
        message = format('thread %s does not wait for a person (its approval at checkpoint %s was cancelled with job %s)',
                         a_thread_id, a_checkpoint, v_job);
    end if;
    raise exception using errcode = 'AS032', message = format('thread %s does not wait for a person', a_thread_id);
  end if;
  if h.checkpoint_id <> a_checkpoint or (s.current_checkpoint_id is not null and s.current_checkpoint_id <> a_checkpoint) then
    raise exception using errcode = 'AS034',
      message = format('checkpoint %s is stale: thread %s waits at %s', a_checkpoint, a_thread_id,
                       coalesce(s.current_checkpoint_id, h.checkpoint_id));
  end if;
  if s.status <> 'waiting' then
    raise exception using errcode = 'AS032',
      message = format('thread %s does not wait for a person (the session is %s)', a_thread_id, s.status);
  end if;

  update ai.agent_jobs u
  set status = 'PENDING', run_at = v_now, updated_at = v_now,
      payload = u.payload || pg_catalog.jsonb_build_object('human', pg_catalog.jsonb_build_object(
        'approval_id', h.approval_id, 'checkpoint_id', h.checkpoint_id, 'action', h.action,
        'decision', a_decision, 'decided_by', ai.calling_role(), 'decided_at', v_now))
  where u.job_id = h.job_id and u.status = 'AWAITING_HUMAN'
  returning u.* into j;
  if not found then
    raise exception using errcode = 'AS032',
      message = format('thread %s does not wait for a person (job %s is no longer AWAITING_HUMAN)', a_thread_id, h.job_id);
  end if;

  update ai.human_approvals x
  set status = 'resolved', decision = a_decision, decided_by = ai.calling_role(), decided_for = ai.current_owner(),
      decided_at = v_now
  where x.approval_id = h.approval_id
  returning x.* into h;
  perform ai.set_session_status(a_thread_id, 'active');
  insert into ai.session_events (thread_id, owner, kind, payload, created_at)
  values (h.thread_id, h.owner, 'human_resolved',
          pg_catalog.jsonb_build_object('approval_id', h.approval_id, 'job_id', h.job_id, 'checkpoint_id', h.checkpoint_id,
                                        'decision', h.decision, 'decided_by', h.decided_by, 'decided_for', h.decided_for),
          v_now);
  perform pg_catalog.pg_notify(ai.queue_channel(j.queue), '');
  return h;
end
$$;
comment on function ai.resolve_human(text, text, jsonb) is
  'Resolves what a thread waits for at checkpoint_id with the decision (JSON up to 1 MiB): stores it with who decided (ai.calling_role()) and for whom (ai.current_owner()) and when, writes a human_resolved event, makes the session ''active'' and puts the job back PENDING, due now, with payload.human = {approval_id, checkpoint_id, action, decision, decided_by, decided_at}; wakes idle workers. Only the session''s owner or a service acting for it (ai.act_as). Returns the approval. Locks the job, then the session, then the approval (the order of cancel_job). Changes nothing when it raises: AS001 unknown thread (or another tenant''s), AS002 bad argument, AS003 decision too large, AS007 a service acting for nobody, AS032 nothing waits (the message says so when the approval at that checkpoint was cancelled with its job), AS033 already resolved, AS034 stale checkpoint.';

-- ---------------------------------------------------------------------------------------------
-- Backfill: approvals that earlier cancels left pending

alter table ai.human_approvals no force row level security;
alter table ai.agent_jobs no force row level security;
alter table ai.agent_jobs_archive no force row level security;
alter table ai.agent_sessions no force row level security;
alter table ai.session_events no force row level security;
do $$
declare
  v_now timestamptz := ai.now();
  h ai.human_approvals;
begin
  for h in
    update ai.human_approvals x
    set status = 'cancelled', decided_at = coalesce(c.finished_at, v_now)
    from (select j.job_id, j.finished_at from ai.agent_jobs j where j.status = 'CANCELLED'
          union all
          select j.job_id, j.finished_at from ai.agent_jobs_archive j where j.status = 'CANCELLED') c
    where x.status = 'pending' and x.job_id = c.job_id
    returning x.*
  loop
    insert into ai.session_events (thread_id, owner, kind, payload, created_at)
    values (h.thread_id, h.owner, 'approval_cancelled',
            pg_catalog.jsonb_build_object('approval_id', h.approval_id, 'job_id', h.job_id,
                                          'checkpoint_id', h.checkpoint_id, 'cancelled_by', null),
            v_now);
    if exists (select from ai.agent_sessions s where s.thread_id = h.thread_id and s.status = 'waiting')
       and not exists (select from ai.human_approvals x where x.thread_id = h.thread_id and x.status = 'pending') then
      perform ai.set_session_status(h.thread_id, 'active');
    end if;
  end loop;
end
$$;
alter table ai.human_approvals force row level security;
alter table ai.agent_jobs force row level security;
alter table ai.agent_jobs_archive force row level security;
alter table ai.agent_sessions force row level security;
alter table ai.session_events force row level security;

commit;
