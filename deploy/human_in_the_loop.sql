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
-- Locks: request_human updates the job row, then the session row (set_session_status);
-- resolve_human locks the session row, then the approval row, then the job row. A claim never
-- touches an AWAITING_HUMAN job, so the two do not meet on the same rows in another order.
begin;

insert into ai.error_codes (sqlstate, name, description) values
  ('AS032', 'not_waiting', 'resolve_human for a thread with nothing waiting for a person (no pending approval, the job was cancelled, or the session is not waiting).'),
  ('AS033', 'already_resolved', 'resolve_human for a checkpoint whose approval was already resolved.'),
  ('AS034', 'stale_checkpoint', 'The checkpoint named is not the one the thread waits on: the thread moved on.');

create table ai.human_approvals (
  approval_id text primary key default ai.ulid(),
  thread_id text not null,
  owner text not null,
  job_id bigint not null,
  checkpoint_id text not null check (pg_catalog.char_length(checkpoint_id) between 1 and 255),
  action jsonb not null default '{}',
  status text not null default 'pending' check (status in ('pending', 'resolved')),
  requested_by text,
  requested_at timestamptz not null,
  decision jsonb,
  decided_by text,
  decided_for text,
  decided_at timestamptz,
  constraint human_approvals_decided check (status = 'pending' or (decision is not null and decided_at is not null)),
  foreign key (thread_id, owner) references ai.agent_sessions (thread_id, owner) on delete cascade
);
comment on table ai.human_approvals is 'What waits for a person: one row per ai.request_human, pending until ai.resolve_human stores the decision with who decided and when. See docs/human-in-the-loop.md.';
comment on column ai.human_approvals.decided_by is 'The role that called resolve_human (a tenant, or a service acting for it).';
comment on column ai.human_approvals.decided_for is 'The owner it decided for (ai.current_owner() at the time).';
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

-- ---------------------------------------------------------------------------------------------

create function ai.request_human(job_id bigint, fencing_token bigint, checkpoint_id text, action jsonb default '{}')
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

create function ai.resolve_human(thread_id text, checkpoint_id text, decision jsonb)
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
  'Resolves what a thread waits for at checkpoint_id with the decision (JSON up to 1 MiB): stores it with who decided (ai.calling_role()) and for whom (ai.current_owner()) and when, writes a human_resolved event, makes the session ''active'' and puts the job back PENDING, due now, with payload.human = {approval_id, checkpoint_id, action, decision, decided_by, decided_at}; wakes idle workers. Only the session''s owner or a service acting for it (ai.act_as). Returns the approval. Changes nothing when it raises: AS001 unknown thread (or another tenant''s), AS002 bad argument, AS003 decision too large, AS007 a service acting for nobody, AS032 nothing waits, AS033 already resolved, AS034 stale checkpoint.';

create function ai.pending_approvals(owner text default null, max_rows integer default 100)
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

create function ai.get_approval(approval_id text) returns ai.human_approvals
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
