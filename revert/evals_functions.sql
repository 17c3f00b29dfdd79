-- Deploy agent-state:evals_functions to pg
-- requires: evals
-- requires: checkpoints_functions
-- requires: compaction_functions
--
-- The functions and triggers of evals (its tables, indexes and row rules:
-- deploy/evals.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework evals_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

-- the bounded reads' signatures
drop function ai.trajectory(text, text, text, integer, bigint);
drop function ai.get_eval_runs(text, text, integer, text, bigint);

create or replace function ai.trajectory(thread_id text, after_checkpoint_id text default null, checkpoint_ns text default '')
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
  v_final bigint;
  v_after timestamptz := '-infinity'::timestamptz;
begin
  perform ai._session_owner(a_thread_id);
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
      and not (m.role = 'system' and m.content ? 'compaction')
    order by m.seq;
end
$$;
comment on function ai.trajectory(text, text, text) is
  'The recorded reference trajectory of a thread, in order: every message (compaction summaries left out) with tool names and arguments pulled out of tool calls ({"name", "arguments" or "args"}) and the final assistant message marked; with after_checkpoint_id, only what was written after that checkpoint was saved (what a replay from it must reproduce). AS001 unknown thread or checkpoint, AS002 bad argument.';
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
  perform ai._check_text(candidate, 'candidate', 1000);
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
  'Records one replay of a recorded thread: the candidate that ran, whether it passed, its scores (a JSON object) and diff, and the fork it ran on. AS001 unknown thread, AS002 bad argument, AS003 document too large.';

create or replace function ai.get_eval_runs(thread_id text default null, candidate text default null, max_rows integer default 100)
returns setof ai.eval_runs
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  perform ai._check_limit(max_rows, 'max_rows');
  return query
    select * from ai.eval_runs e
    where (get_eval_runs.thread_id is null or e.thread_id = get_eval_runs.thread_id)
      and (get_eval_runs.candidate is null or e.candidate = get_eval_runs.candidate)
    order by e.created_at desc, e.eval_id desc
    limit max_rows;
end
$$;
comment on function ai.get_eval_runs(text, text, integer) is
  'The caller''s eval runs, newest first, optionally of one recorded thread and/or one candidate, at most max_rows (1 to 10000). AS002 bad max_rows.';

revoke execute on function ai.trajectory(text, text, text), ai.record_eval_run(text, text, boolean, jsonb, jsonb, text, text),
  ai.get_eval_runs(text, text, integer) from public;
grant execute on function ai.trajectory(text, text, text), ai.record_eval_run(text, text, boolean, jsonb, jsonb, text, text),
  ai.get_eval_runs(text, text, integer) to ai_user, ai_service;

commit;
