-- Deploy agent-state:human_in_the_loop_functions to pg
-- Reworked after v0.1.0; the tagged script is deploy/human_in_the_loop_functions@v0.1.0.sql.
-- requires: human_in_the_loop
-- requires: queue_functions
-- requires: sessions_functions
--
-- The functions and triggers of human in the loop (its tables, indexes and row rules:
-- deploy/human_in_the_loop.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework human_in_the_loop_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

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
  if a_job_id is null and a_token is null then
    raise exception using errcode = 'AS002', message = 'job_id and fencing_token must not be NULL';
  end if;
  perform ai._check_text(a_checkpoint, 'checkpoint_id');
  perform ai._check_document(a_action, 'action');
  -- The guard of every write made for a job (one without the other, lease lost, unknown job);
  -- the thread is the job's own.
  perform ai._fence(null, a_job_id, a_token);

  -- The UPDATE repeats the holder's condition, as complete_job does: a taker between the guard
  -- and here leaves it nothing to match. The pause gives the attempt back.
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

  -- the thread's newest root checkpoint (computed: the session row does not hold it)
  select c.checkpoint_id into v_current from ai.checkpoints c
  where c.thread_id = j.thread_id and c.checkpoint_ns = '' order by c.checkpoint_id desc limit 1;
  if v_current is not null and v_current <> a_checkpoint then
    raise exception using errcode = 'AS034',
      message = format('checkpoint %s is not the newest of thread %s (%s)', a_checkpoint, j.thread_id, v_current);
  end if;
  perform ai._move_session_status(j.thread_id, 'waiting');

  -- A pending approval of this very job is taken over by the new request: its job's half of an
  -- earlier request was lost while the approval's was kept (anywhere, a job moved back by hand;
  -- where the queue and the thread's node commit apart, a crash between the two: a Citus
  -- formation whose queue tables lack ai.distribute()'s two-phase trigger, docs/scaling.md).
  -- Refusing it (AS004) would refuse the run forever.
  update ai.human_approvals x
  set checkpoint_id = a_checkpoint, action = a_action, requested_by = v_worker, requested_at = v_now
  where x.thread_id = j.thread_id and x.job_id = j.job_id and x.status = 'pending'
  returning x.* into h;
  if not found then
    begin
      insert into ai.human_approvals (thread_id, owner, job_id, checkpoint_id, action, requested_by, requested_at)
      values (j.thread_id, j.owner, j.job_id, a_checkpoint, a_action, v_worker, v_now)
      returning * into h;
    exception when unique_violation then
      raise exception using errcode = 'AS004',
        message = format('thread %s already waits for a person', j.thread_id);
    end;
  end if;
  insert into ai.session_events (thread_id, owner, kind, payload, created_at)
  values (h.thread_id, h.owner, 'pending_approval',
          pg_catalog.jsonb_build_object('approval_id', h.approval_id, 'job_id', h.job_id,
                                        'checkpoint_id', h.checkpoint_id, 'action', h.action),
          v_now);
  return h.approval_id;
end
$$;
comment on function ai.request_human(bigint, bigint, text, jsonb) is
  'Pauses a job held with fencing_token for a person (fenced: ai._fence): the job becomes AWAITING_HUMAN with its lease released and the attempt given back, the session ''waiting'', and a pending approval (with the staged action and the checkpoint to resume from) is stored and announced by a pending_approval event. Returns the approval id. A pending approval of the same job (its job''s half of an earlier request lost: a job moved back by hand, or a crash between the queue and the thread''s node where they commit apart, docs/scaling.md) is taken over by the new request, with its id. The checkpoint must be the thread''s newest root-namespace checkpoint when it has one. For ai_service. AS001 unknown job, AS002 bad argument or a payload that is not a JSON object, AS003 action over 1 MiB, AS004 the session is finished or already waits, AS006 lease lost, AS034 stale checkpoint.';

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
  -- who cancelled, read here, on the caller's node: the UPDATE below then writes plain values
  -- (on a Citus formation it runs on the thread's shard, where these functions would not plan)
  v_by text := ai.calling_role();
  v_for text := case when ai.sees_all_owners() then null else ai.current_owner() end;
  h ai.human_approvals;
begin
  -- The session before the approval (job, session, approval: the order of request_human and
  -- resolve_human), and only when it waits: a finished session is not touched.
  select s.status into v_session from ai.agent_sessions s where s.thread_id = a_thread_id;
  if v_session = 'waiting' then
    select s.status into v_session from ai.agent_sessions s where s.thread_id = a_thread_id for no key update;
  end if;

  -- by the thread too (human_approvals_one_pending_per_thread; on a formation, its one shard)
  update ai.human_approvals x
  set status = 'cancelled', decided_by = v_by, decided_for = v_for, decided_at = v_now
  where x.thread_id = a_thread_id and x.job_id = a_job_id and x.status = 'pending'
  returning x.* into h;
  if not found then
    return;  -- nothing waited (a row written by hand)
  end if;

  insert into ai.session_events (thread_id, owner, kind, payload, created_at)
  values (h.thread_id, h.owner, 'approval_cancelled',
          pg_catalog.jsonb_build_object('approval_id', h.approval_id, 'job_id', h.job_id,
                                        'checkpoint_id', h.checkpoint_id, 'cancelled_by', h.decided_by),
          v_now);
  if v_session = 'waiting' then
    -- a statement of its own (on a Citus formation an expression that mixes a variable and a
    -- query of a distributed table does not plan)
    perform from ai.human_approvals x where x.thread_id = a_thread_id and x.status = 'pending';
    if not found then
      perform ai._move_session_status(h.thread_id, 'active');
    end if;
  end if;
end
$$;
comment on function ai._close_approval_of_job(bigint, text) is
  'Internal (the status trigger of ai.agent_jobs, after a job went from AWAITING_HUMAN to CANCELLED): the job''s pending approval becomes cancelled (decided_by = ai.calling_role()), an approval_cancelled event is written, and a waiting session is active again when nothing else of the thread waits. Runs inside the function that moved the job.';
revoke execute on function ai._close_approval_of_job(bigint, text) from public;
-- internal helpers (ai._*): no EXECUTE grant; only the schema owner's functions call them

-- What a decision adds to its job's payload (payload.human), for resolve_human's two paths.
create or replace function ai._human_payload(approval_id text, checkpoint_id text, action jsonb, decision jsonb,
                                             decided_by text, decided_at timestamptz) returns jsonb
language sql stable
set search_path = pg_catalog, pg_temp
as $$
  select pg_catalog.jsonb_build_object('human', pg_catalog.jsonb_build_object(
    'approval_id', approval_id, 'checkpoint_id', checkpoint_id, 'action', action,
    'decision', decision, 'decided_by', decided_by, 'decided_at', decided_at))
$$;
comment on function ai._human_payload(text, text, jsonb, jsonb, text, timestamptz) is
  'Internal (ai.resolve_human): {"human": {approval_id, checkpoint_id, action, decision, decided_by, decided_at}}, what a decision adds to its job''s payload.';
revoke execute on function ai._human_payload(text, text, jsonb, jsonb, text, timestamptz) from public;

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
  v_current text;
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
  if not found then
    -- none pending: the job of the approval resolved at this checkpoint, should it still wait (below)
    select x.job_id into v_job from ai.human_approvals x
    where x.thread_id = a_thread_id and x.checkpoint_id = a_checkpoint and x.status = 'resolved'
    order by x.decided_at desc, x.approval_id desc
    limit 1;
  end if;
  if v_job is not null then
    perform from ai.agent_jobs u where u.job_id = v_job and u.status = 'AWAITING_HUMAN' for no key update;
  end if;
  select * into s from ai.agent_sessions x where x.thread_id = a_thread_id for no key update;
  if not found then
    raise exception using errcode = 'AS001', message = format('thread %s not found', a_thread_id);
  end if;
  -- the thread's newest root checkpoint (computed: the session row does not hold it)
  v_current := (select c.checkpoint_id from ai.checkpoints c
                where c.thread_id = a_thread_id and c.checkpoint_ns = ''
                order by c.checkpoint_id desc limit 1);
  select * into h from ai.human_approvals x where x.thread_id = a_thread_id and x.status = 'pending' for update;
  if not found then
    select * into h from ai.human_approvals x
    where x.thread_id = a_thread_id and x.checkpoint_id = a_checkpoint and x.status = 'resolved'
    order by x.decided_at desc, x.approval_id desc
    limit 1;
    if found then
      -- Resolved, and its job still waits: the job's half of that decision was lost (anywhere, a
      -- job moved back by hand; where the queue and the thread's node commit apart, a crash
      -- between the two: a Citus formation whose queue tables lack ai.distribute()'s two-phase
      -- trigger, docs/scaling.md). The job takes the decision stored then, which this call
      -- returns; the session is active already.
      update ai.agent_jobs u
      set status = 'PENDING', run_at = v_now, updated_at = v_now, vtime = null,
          payload = u.payload || ai._human_payload(h.approval_id, h.checkpoint_id, h.action, h.decision,
                                                   h.decided_by, h.decided_at)
      where u.job_id = h.job_id and u.status = 'AWAITING_HUMAN'
      returning u.* into j;
      if found then
        perform pg_catalog.pg_notify(ai.queue_channel(j.queue), '');
        return h;
      end if;
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
  if h.checkpoint_id <> a_checkpoint or (v_current is not null and v_current <> a_checkpoint) then
    raise exception using errcode = 'AS034',
      message = format('checkpoint %s is stale: thread %s waits at %s', a_checkpoint, a_thread_id,
                       coalesce(v_current, h.checkpoint_id));
  end if;
  if s.status <> 'waiting' then
    raise exception using errcode = 'AS032',
      message = format('thread %s does not wait for a person (the session is %s)', a_thread_id, s.status);
  end if;

  update ai.agent_jobs u
  set status = 'PENDING', run_at = v_now, updated_at = v_now,
      vtime = null,  -- placed again in the fair order (deploy/job_keys.sql) by the next claim
      payload = u.payload || ai._human_payload(h.approval_id, h.checkpoint_id, h.action, a_decision,
                                               ai.calling_role(), v_now)
  where u.job_id = h.job_id and u.status = 'AWAITING_HUMAN'
  returning u.* into j;
  if not found then
    raise exception using errcode = 'AS032',
      message = format('thread %s does not wait for a person (job %s is no longer AWAITING_HUMAN)', a_thread_id, h.job_id);
  end if;

  -- by the thread too: on a Citus formation the approval's one shard (by its id alone, an UPDATE
  -- of every shard, committed by two-phase commit on each worker)
  update ai.human_approvals x
  set status = 'resolved', decision = a_decision, decided_by = ai.calling_role(), decided_for = ai.current_owner(),
      decided_at = v_now
  where x.thread_id = a_thread_id and x.approval_id = h.approval_id
  returning x.* into h;
  perform ai._move_session_status(a_thread_id, 'active');
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
  'Resolves what a thread waits for at checkpoint_id with the decision (JSON up to 1 MiB): stores it with who decided (ai.calling_role()) and for whom (ai.current_owner()) and when, writes a human_resolved event, makes the session ''active'' and puts the job back PENDING, due now, with payload.human = {approval_id, checkpoint_id, action, decision, decided_by, decided_at}; wakes idle workers. Only the session''s owner or a service acting for it (ai.act_as). Returns the approval. An approval resolved at checkpoint_id whose job still waits (the job''s half of the decision lost: a job moved back by hand, or a crash between the queue and the thread''s node where they commit apart, docs/scaling.md) puts the job back PENDING with the decision stored then and returns that approval. Locks the job, then the session, then the approval (the order of cancel_job). Changes nothing when it raises: AS001 unknown thread (or another tenant''s), AS002 bad argument, AS003 decision too large, AS007 a service acting for nobody, AS032 nothing waits (the message says so when the approval at that checkpoint was cancelled with its job), AS033 already resolved, AS034 stale checkpoint.';

-- v0.1.0's pending_approvals had no cursor; a v0.1.0 caller's arguments resolve to this one.
drop function if exists ai.pending_approvals(text, integer);
-- Oldest first on (requested_at, approval_id). A tenant's call walks its own pending approvals
-- (human_approvals_owner_pending), never another tenant's; a service acting for nobody walks
-- every owner's (human_approvals_pending). The cursor is the last row's approval_id.
create or replace function ai.pending_approvals(owner text default null, max_rows integer default 100,
                                     after_approval_id text default null)
returns setof ai.human_approvals
language plpgsql stable
-- planned per call: the caller decides the index (a tenant's own rows, or every owner's); a
-- generic plan would guess an average owner's share and read the other tenants' rows
set plan_cache_mode = force_custom_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_owner alias for $1;
  a_max_rows alias for $2;
  a_after alias for $3;
  v_after_at timestamptz;
  v_owner text := a_owner;
  v_after text := a_after;
  v_limit integer;
  v_read integer;
  v_count integer := 0;
  v_h ai.human_approvals;
begin
  perform ai._check_limit(a_max_rows, 'max_rows');
  if a_after is not null then
    select h.requested_at into v_after_at from ai.human_approvals h where h.approval_id = a_after;
    if not found then
      raise exception using errcode = 'AS001', message = format('approval %s not found', a_after);
    end if;
  end if;
  if v_owner is null and not ai.sees_all_owners() then
    v_owner := ai.current_owner();  -- RLS shows a tenant its own: say so, so the owner's index serves
  end if;
  -- The pending approvals, then each one's job: not a join, since on a Citus formation the
  -- approvals are on the shards and the jobs on the coordinator (docs/scaling.md). An approval
  -- whose job no longer waits (a raw UPDATE moved it) is left out; when one is, the next page
  -- after the last approval read fills the answer up.
  loop
    v_limit := a_max_rows - v_count;
    v_read := 0;
    for v_h in select x.* from ai.human_approvals x
             where x.status = 'pending' and (v_owner is null or x.owner = v_owner)
               and (v_after is null or (x.requested_at, x.approval_id) > (v_after_at, v_after))
             order by x.requested_at, x.approval_id
             limit v_limit loop
      v_read := v_read + 1;
      v_after_at := v_h.requested_at;
      v_after := v_h.approval_id;
      if exists (select from ai.agent_jobs j where j.job_id = v_h.job_id and j.status = 'AWAITING_HUMAN') then
        v_count := v_count + 1;
        return next v_h;
      end if;
    end loop;
    exit when v_read < v_limit or v_count >= a_max_rows;
  end loop;
end
$$;
comment on function ai.pending_approvals(text, integer, text) is
  'What waits for a person, oldest first (by requested_at, then approval_id): pending approvals whose job is still AWAITING_HUMAN, of one owner or (NULL) of every owner the caller sees (RLS: a tenant sees its own, at a cost that grows with its own approvals only). At most max_rows (1 to 10000, default 100); the next page: after_approval_id = the last row''s approval_id. AS001 unknown cursor approval, AS002 bad max_rows.';

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

-- The history of decisions (issue 32: what was decided, by whom, when), newest first: a tenant's
-- call reads its own (human_approvals_owner_decided), a service's every owner's
-- (human_approvals_decided), one thread's by human_approvals_thread.
create or replace function ai.decided_approvals(owner text default null, thread_id text default null,
                                                max_rows integer default 100,
                                                before_decided_at timestamptz default null,
                                                before_approval_id text default null)
returns setof ai.human_approvals
language plpgsql stable
set plan_cache_mode = force_custom_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_owner alias for $1;
  a_thread_id alias for $2;
  a_max_rows alias for $3;
  a_before_at alias for $4;
  a_before_id alias for $5;
  v_owner text := a_owner;
begin
  perform ai._check_limit(a_max_rows, 'max_rows');
  if (a_before_at is null) <> (a_before_id is null) then
    raise exception using errcode = 'AS002', message = 'before_decided_at and before_approval_id go together';
  end if;
  if a_thread_id is not null then
    perform ai._session_owner(a_thread_id);  -- AS002 bad id, AS001 unknown (or another tenant's)
  end if;
  if a_owner is not null then
    perform ai._check_text(a_owner, 'owner');
  end if;
  if not ai.sees_all_owners() then
    if a_owner is not null and a_owner <> ai.current_owner() then
      return;  -- another tenant's decisions: none the caller may see (RLS would hide them as well)
    end if;
    v_owner := ai.current_owner();
  end if;
  return query
  select h.* from ai.human_approvals h
  where h.status <> 'pending' and h.decided_at is not null
    and (v_owner is null or h.owner = v_owner) and (a_thread_id is null or h.thread_id = a_thread_id)
    and (a_before_at is null or (h.decided_at, h.approval_id) < (a_before_at, a_before_id))
  order by h.decided_at desc, h.approval_id desc
  limit a_max_rows;
end
$$;
comment on function ai.decided_approvals(text, text, integer, timestamptz, text) is
  'The approvals decided (resolved: the decision, decided_by, decided_for, decided_at) or ended by a cancel, newest decision first, of one owner and/or thread when given (RLS: a tenant sees its own; naming another owner lists nothing). At most max_rows (1 to 10000, default 100); the next page: before_decided_at, before_approval_id = the last row''s decided_at and approval_id. AS001 unknown thread (or another tenant''s), AS002 bad argument.';

revoke execute on function ai.request_human(bigint, bigint, text, jsonb), ai.resolve_human(text, text, jsonb),
  ai.pending_approvals(text, integer, text), ai.get_approval(text), ai.decided_approvals(text, text, integer, timestamptz, text)
  from public;
grant execute on function ai.resolve_human(text, text, jsonb), ai.pending_approvals(text, integer, text), ai.get_approval(text),
  ai.decided_approvals(text, text, integer, timestamptz, text)
  to ai_user, ai_service;
grant execute on function ai.request_human(bigint, bigint, text, jsonb) to ai_service;

commit;
