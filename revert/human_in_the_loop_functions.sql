-- Deploy agent-state:human_in_the_loop_functions to pg
-- requires: human_in_the_loop
-- requires: queue_functions
-- requires: sessions_functions
--
-- The functions and triggers of human in the loop (its tables, indexes and row rules:
-- deploy/human_in_the_loop.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework human_in_the_loop_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

-- resolve_human's payload.human (issue 40)
drop function ai._human_payload(text, text, jsonb, jsonb, text, timestamptz);
-- the history of decisions (issue 32)
drop function ai.decided_approvals(text, text, integer, timestamptz, text);
-- the bounded read's signature
drop function ai.pending_approvals(text, integer, text);

-- ---------------------------------------------------------------------------------------------

create or replace function ai.request_human(job_id bigint, fencing_token bigint, checkpoint_id text, action jsonb default '{}')
returns text
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_job_id alias for $1;
  a_token alias for $2;
  a_checkpoint alias for $3;
  a_action alias for $4;
  v_now timestamptz := ai.now();
  v_worker text;
  v_current text;
  j ai.agent_jobs;
  h ai.human_approvals;
begin
  if a_job_id is null or a_token is null then
    raise exception using errcode = 'AS002', message = 'job_id and fencing_token must not be NULL';
  end if;
  perform ai._check_text(a_checkpoint, 'checkpoint_id');
  perform ai._check_document(a_action, 'action');

  -- Fenced in the UPDATE itself, as complete_job is. The pause gives the attempt back.
  select u.lease_owner into v_worker from ai.agent_jobs u
  where u.job_id = a_job_id and u.status = 'IN_PROGRESS' and u.fencing_token = a_token and u.lease_expires_at > v_now;
  update ai.agent_jobs u
  set status = 'AWAITING_HUMAN', attempts = greatest(u.attempts - 1, 0), lease_owner = null, lease_expires_at = null,
      updated_at = v_now
  where u.job_id = a_job_id and u.status = 'IN_PROGRESS' and u.fencing_token = a_token and u.lease_expires_at > v_now
  returning u.* into j;
  if not found then
    perform ai._raise_lease_lost(a_job_id, a_token);
  end if;
  if pg_catalog.jsonb_typeof(j.payload) <> 'object' then
    raise exception using errcode = 'AS002',
      message = format('job %s: only a job whose payload is a JSON object can wait for a person (the decision is added to it)', a_job_id);
  end if;

  select s.current_checkpoint_id into v_current from ai.agent_sessions s where s.thread_id = j.thread_id;
  if v_current is not null and v_current <> a_checkpoint then
    raise exception using errcode = 'AS034',
      message = format('checkpoint %s is not the newest of thread %s (%s)', a_checkpoint, j.thread_id, v_current);
  end if;
  perform ai.set_session_status(j.thread_id, 'waiting');

  begin
    insert into ai.human_approvals (thread_id, owner, job_id, checkpoint_id, action, requested_by, requested_at)
    values (j.thread_id, j.owner, j.job_id, a_checkpoint, a_action, v_worker, v_now)
    returning * into h;
  exception when unique_violation then
    raise exception using errcode = 'AS004',
      message = format('thread %s already waits for a person', j.thread_id);
  end;
  insert into ai.session_events (thread_id, owner, kind, payload, created_at)
  values (h.thread_id, h.owner, 'pending_approval',
          pg_catalog.jsonb_build_object('approval_id', h.approval_id, 'job_id', h.job_id,
                                        'checkpoint_id', h.checkpoint_id, 'action', h.action),
          v_now);
  return h.approval_id;
end
$$;
comment on function ai.request_human(bigint, bigint, text, jsonb) is
  'Pauses a job held with fencing_token for a person (fenced): the job becomes AWAITING_HUMAN with its lease released and the attempt given back, the session ''waiting'', and a pending approval (with the staged action and the checkpoint to resume from) is stored and announced by a pending_approval event. Returns the approval id. The checkpoint must be the thread''s newest (agent_sessions.current_checkpoint_id) when it has one. For ai_service. AS001 unknown job, AS002 bad argument or a payload that is not a JSON object, AS003 action over 1 MiB, AS004 the session is finished or already waits, AS006 lease lost, AS034 stale checkpoint.';

-- A job that waited for a person was cancelled (called by the status trigger of ai.agent_jobs,
-- ai._job_status_moved): its approval is cancelled, an approval_cancelled event written, and a
-- waiting session made active again (deploy/human_in_the_loop.sql says how a cancel ends a wait).
create or replace function ai._close_approval_of_job(job_id bigint, thread_id text) returns void
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

create or replace function ai.pending_approvals(owner text default null, max_rows integer default 100)
returns setof ai.human_approvals
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  perform ai._check_limit(pending_approvals.max_rows, 'max_rows');
  return query
  select h.* from ai.human_approvals h
  where h.status = 'pending' and (pending_approvals.owner is null or h.owner = pending_approvals.owner)
    and exists (select from ai.agent_jobs j where j.job_id = h.job_id and j.status = 'AWAITING_HUMAN')
  order by h.requested_at, h.approval_id
  limit pending_approvals.max_rows;
end
$$;
comment on function ai.pending_approvals(text, integer) is
  'What waits for a person, oldest first: pending approvals whose job is still AWAITING_HUMAN, of one owner or (NULL) of every owner the caller sees (RLS: a tenant sees its own). At most max_rows (1 to 10000). AS002 bad max_rows.';

create or replace function ai.get_approval(approval_id text) returns ai.human_approvals
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  h ai.human_approvals;
begin
  select * into h from ai.human_approvals x where x.approval_id = get_approval.approval_id;
  if not found then
    raise exception using errcode = 'AS001', message = format('approval %s not found', get_approval.approval_id);
  end if;
  return h;
end
$$;
comment on function ai.get_approval(text) is 'One approval, pending or resolved. AS001 unknown approval (or another tenant''s).';

revoke execute on function ai.request_human(bigint, bigint, text, jsonb), ai.resolve_human(text, text, jsonb),
  ai.pending_approvals(text, integer), ai.get_approval(text) from public;
grant execute on function ai.resolve_human(text, text, jsonb), ai.pending_approvals(text, integer), ai.get_approval(text)
  to ai_user, ai_service;
grant execute on function ai.request_human(bigint, bigint, text, jsonb) to ai_service;

commit;
