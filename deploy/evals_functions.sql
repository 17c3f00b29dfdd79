-- Deploy agent-state:evals_functions to pg
-- requires: evals
-- requires: checkpoints_functions
-- requires: compaction_functions
--
-- The functions and triggers of evals (its tables, indexes and row rules:
-- deploy/evals.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework evals_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

-- v0.1.0's trajectory and get_eval_runs had no limit or no cursor; a v0.1.0 caller's arguments
-- resolve to these.
drop function if exists ai.trajectory(text, text, text);
drop function if exists ai.get_eval_runs(text, text, integer);

create or replace function ai.trajectory(thread_id text, after_checkpoint_id text default null, checkpoint_ns text default '',
                              max_rows integer default 10000, after_seq bigint default null)
returns setof ai.trajectory_step
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_checkpoint alias for $2;
  a_ns alias for $3;
  a_max_rows alias for $4;
  a_after_seq alias for $5;
  v_final bigint;
  v_after timestamptz := '-infinity'::timestamptz;
begin
  perform ai._session_owner(a_thread_id);
  perform ai._check_limit(a_max_rows, 'max_rows');
  if a_checkpoint is not null then
    perform ai._check_checkpoint_ns(a_ns);
    -- Messages and checkpoints are two grains of one timeline: what happened after a checkpoint
    -- is what was written after it was saved.
    select c.created_at into v_after from ai.checkpoints c
    where c.thread_id = a_thread_id and c.checkpoint_ns = a_ns and c.checkpoint_id = a_checkpoint;
    if not found then
      raise exception using errcode = 'AS001',
        message = format('checkpoint %s of thread %s not found', a_checkpoint, a_thread_id);
    end if;
  end if;
  select max(m.seq) into v_final from ai.session_messages m where m.thread_id = a_thread_id and m.role = 'assistant';

  -- Compaction summaries are not steps: they describe the trajectory, they are not part of it.
  return query
    select m.seq, m.role,
           case when m.role in ('tool_call', 'tool_result') and pg_catalog.jsonb_typeof(m.content) = 'object'
                then m.content ->> 'name' end,
           case when m.role = 'tool_call' and pg_catalog.jsonb_typeof(m.content) = 'object'
                then coalesce(m.content -> 'arguments', m.content -> 'args') end,
           m.content,
           coalesce(m.seq = v_final, false)
    from ai.session_messages m
    where m.thread_id = a_thread_id and m.created_at > v_after
      and (a_after_seq is null or m.seq > a_after_seq)
      and not (m.role = 'system' and m.content ? 'compaction')
    order by m.seq
    limit a_max_rows;
end
$$;
comment on function ai.trajectory(text, text, text, integer, bigint) is
  'The recorded reference trajectory of a thread, in order, at most max_rows steps (1 to 10000, default 10000; the next page: after_seq = the last row''s seq): every message (compaction summaries left out) with tool names and arguments pulled out of tool calls ({"name", "arguments" or "args"}) and the final assistant message marked; with after_checkpoint_id, only what was written after that checkpoint was saved (what a replay from it must reproduce). AS001 unknown thread or checkpoint, AS002 bad argument.';
-- No table privilege for ai_user or ai_service: they reach this table only through the functions,
-- which run as the schema owner (SECURITY DEFINER; docs/security.md).

create or replace function ai.record_eval_run(thread_id text, candidate text, passed boolean, scores jsonb default '{}',
                                   diff jsonb default '{}', replay_thread_id text default null,
                                   from_checkpoint_id text default null)
returns ai.eval_runs
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  v_owner text;
  e ai.eval_runs;
begin
  perform ai._check_thread_id(a_thread_id);
  perform ai._check_key(candidate, 'candidate', 1000);  -- bytes: beside its owner in eval_runs_candidate
  if passed is null then
    raise exception using errcode = 'AS002', message = 'passed must not be NULL';
  end if;
  perform ai._check_document(scores, 'scores', must_be_object => true);
  perform ai._check_document(diff, 'diff');
  if replay_thread_id is not null then
    perform ai._check_thread_id(replay_thread_id);
  end if;
  v_owner := ai._session_owner(a_thread_id);
  insert into ai.eval_runs (thread_id, owner, replay_thread_id, from_checkpoint_id, candidate, passed, scores, diff, created_at)
  values (a_thread_id, v_owner, replay_thread_id, from_checkpoint_id, candidate, passed, scores, diff, ai.now())
  returning * into e;
  return e;
end
$$;
comment on function ai.record_eval_run(text, text, boolean, jsonb, jsonb, text, text) is
  'Records one replay of a recorded thread: the candidate that ran, whether it passed, its scores (a JSON object) and diff, and the fork it ran on. AS001 unknown thread, AS002 bad argument (a candidate over 1000 bytes of UTF-8 too), AS003 document too large.';

-- Newest first on (created_at, eval_id). A tenant's call walks its own rows
-- (eval_runs_owner_created), never another tenant's; a service acting for nobody sees every row.
-- The cursor is the last row's (thread_id, eval_id), whose created_at is read back.
create or replace function ai.get_eval_runs(thread_id text default null, candidate text default null, max_rows integer default 100,
                                 before_thread_id text default null, before_eval_id bigint default null)
returns setof ai.eval_runs
language plpgsql stable
-- planned per call: the caller decides the index (a tenant's own rows, or every owner's); a
-- generic plan would guess an average owner's share and read the other tenants' rows
set plan_cache_mode = force_custom_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_candidate alias for $2;
  a_max_rows alias for $3;
  a_before_thread alias for $4;
  a_before_id alias for $5;
  v_before_at timestamptz;
  v_all boolean := ai.sees_all_owners();
  v_owner text := ai.current_owner();  -- a variable: the plan knows the owner
begin
  perform ai._check_limit(a_max_rows, 'max_rows');
  if (a_before_thread is null) <> (a_before_id is null) then
    raise exception using errcode = 'AS002', message = 'before_thread_id and before_eval_id go together';
  end if;
  if a_before_id is not null then
    select e.created_at into v_before_at from ai.eval_runs e where e.thread_id = a_before_thread and e.eval_id = a_before_id;
    if not found then
      raise exception using errcode = 'AS001', message = format('eval run %s of thread %s not found', a_before_id, a_before_thread);
    end if;
  end if;
  return query
    select * from ai.eval_runs e
    where (v_all or e.owner = v_owner)
      and (a_thread_id is null or e.thread_id = a_thread_id)
      and (a_candidate is null or e.candidate = a_candidate)
      and (a_before_id is null or (e.created_at, e.eval_id) < (v_before_at, a_before_id))
    order by e.created_at desc, e.eval_id desc
    limit a_max_rows;
end
$$;
comment on function ai.get_eval_runs(text, text, integer, text, bigint) is
  'The caller''s eval runs, newest first (by created_at, then eval_id), optionally of one recorded thread and/or one candidate, at most max_rows (1 to 10000, default 100); the next page: before_thread_id, before_eval_id = the last row''s thread_id, eval_id. A tenant''s cost grows with its own runs only. AS001 unknown cursor run, AS002 bad argument.';

revoke execute on function ai.trajectory(text, text, text, integer, bigint), ai.record_eval_run(text, text, boolean, jsonb, jsonb, text, text),
  ai.get_eval_runs(text, text, integer, text, bigint) from public;
grant execute on function ai.trajectory(text, text, text, integer, bigint), ai.record_eval_run(text, text, boolean, jsonb, jsonb, text, text),
  ai.get_eval_runs(text, text, integer, text, bigint) to ai_user, ai_service;

commit;
