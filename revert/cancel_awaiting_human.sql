-- Revert agent-state:cancel_awaiting_human from pg
-- Puts back the schema of human_in_the_loop: no trigger, resolve_human as it was, the approval
-- statuses pending and resolved. Cancelled approvals become what the earlier code left behind, a
-- pending approval whose job is CANCELLED, which that code can hold for one approval per thread
-- only: when a thread has more than one cancelled approval, or a cancelled and a pending one
-- (it waited again after a cancel), the revert refuses, naming a thread. The approval_cancelled
-- events and the sessions made active stay: they are history.
begin;

drop trigger agent_jobs_close_approval_on_cancel on ai.agent_jobs;
drop function ai._close_approval_of_cancelled_job();
drop function ai._close_approval_of_job(bigint, text);

-- The deploying role owns the tables but is subject to their forced row level security.
alter table ai.human_approvals no force row level security;
alter table ai_archive.human_approvals no force row level security;
do $$
declare
  v_thread text;
begin
  select x.thread_id into v_thread
  from (select a.thread_id, a.status from ai.human_approvals a
        union all
        select a.thread_id, a.status from ai_archive.human_approvals a) x
  where x.status in ('pending', 'cancelled')
  group by x.thread_id
  having count(*) > 1 and count(*) filter (where x.status = 'cancelled') > 0
  limit 1;
  if found then
    raise exception 'thread % has a cancelled approval and another pending or cancelled one, which human_in_the_loop cannot hold (one pending approval per thread)', v_thread
      using hint = 'delete the cancelled approvals you do not need to keep (as the schema owner) before reverting cancel_awaiting_human';
  end if;
end
$$;
update ai.human_approvals set status = 'pending', decided_by = null, decided_for = null, decided_at = null
where status = 'cancelled';
update ai_archive.human_approvals set status = 'pending', decided_by = null, decided_for = null, decided_at = null
where status = 'cancelled';
alter table ai.human_approvals force row level security;
alter table ai_archive.human_approvals force row level security;

alter table ai.human_approvals
  drop constraint human_approvals_status_check,
  drop constraint human_approvals_decided,
  add constraint human_approvals_status_check check (status in ('pending', 'resolved')),
  add constraint human_approvals_decided check (status = 'pending' or (decision is not null and decided_at is not null));
alter table ai_archive.human_approvals
  drop constraint human_approvals_status_check,
  drop constraint human_approvals_decided,
  add constraint human_approvals_status_check check (status in ('pending', 'resolved')),
  add constraint human_approvals_decided check (status = 'pending' or (decision is not null and decided_at is not null));
comment on table ai.human_approvals is 'What waits for a person: one row per ai.request_human, pending until ai.resolve_human stores the decision with who decided and when. See docs/human-in-the-loop.md.';
comment on column ai.human_approvals.decided_by is 'The role that called resolve_human (a tenant, or a service acting for it).';
comment on column ai.human_approvals.decided_for is 'The owner it decided for (ai.current_owner() at the time).';

comment on function ai.cancel_job(bigint) is
  'Cancels a PENDING, IN_PROGRESS or AWAITING_HUMAN job and returns it; a worker still running it loses its lease (its next fenced call raises AS006). Tenants may cancel their own jobs. AS001 unknown job (or another tenant''s), AS004 job already finished.';

-- resolve_human as human_in_the_loop made it
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

commit;
