-- Deploy agent-state:evals to pg
-- requires: compaction
-- requires: checkpoints
--
-- Every recorded session is a ground-truth trajectory. ai.trajectory reads it back as the
-- steps an eval compares: the tool calls with their arguments, the tool results, and the final
-- assistant message. ai.eval_runs keeps each replay's comparison and scores for later queries.
begin;

-- One step of a recorded trajectory. Tool calls are messages of role tool_call whose content
-- is {"name": ..., "arguments": {...}} (or "args", as some frameworks write it).
create type ai.trajectory_step as (
  seq bigint,
  role text,
  tool_name text,     -- tool_call and tool_result: content->>'name' when present
  arguments jsonb,    -- tool_call: content->'arguments' (or content->'args')
  content jsonb,
  is_final boolean    -- the last assistant message of the thread
);
comment on type ai.trajectory_step is 'One step of a recorded trajectory: a message, with the tool name and arguments pulled out of tool calls.';

create table ai.eval_runs (
  eval_id bigint generated always as identity,
  thread_id text not null,          -- the recorded (reference) thread
  owner text not null,
  replay_thread_id text,            -- the fork the candidate ran on
  from_checkpoint_id text,
  candidate text not null,          -- what ran: a model, a prompt, module:function
  passed boolean not null,
  scores jsonb not null default '{}' check (pg_catalog.jsonb_typeof(scores) = 'object'),
  diff jsonb not null default '{}',
  created_at timestamptz not null default ai.now(),
  primary key (thread_id, eval_id),
  foreign key (thread_id, owner) references ai.agent_sessions (thread_id, owner) on delete cascade
);
comment on table ai.eval_runs is 'Each replay of a recorded thread by a candidate, with its comparison and scores.';
create index eval_runs_candidate on ai.eval_runs (owner, candidate, created_at desc);

alter table ai.eval_runs enable row level security;
alter table ai.eval_runs force row level security;
create policy eval_runs_by_owner on ai.eval_runs
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));

commit;
