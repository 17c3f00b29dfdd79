-- Deploy agent-state:events to pg
-- requires: sessions
begin;

-- The operator's event stream: start, status, step_started, tool_call, tool_result,
-- pending_approval, complete, error, ... Kinds are an open set of lowercase names.
-- event_id comes from one identity sequence: it orders a thread's events without taking the
-- session lock (an event never waits on an append, and gaps here are harmless).
create table ai.session_events (
  thread_id text not null,
  event_id bigint generated always as identity,
  owner text not null,
  kind text not null check (kind ~ '^[a-z][a-z0-9_.]{0,62}$'),
  payload jsonb not null default '{}',
  created_at timestamptz not null default ai.now(),
  primary key (thread_id, event_id),
  foreign key (thread_id, owner) references ai.agent_sessions (thread_id, owner) on delete cascade
);
comment on table ai.session_events is 'The operator''s event stream of each thread (start, status, tool_call, error, ...), ordered by event_id.';

alter table ai.session_events enable row level security;
alter table ai.session_events force row level security;
create policy session_events_by_owner on ai.session_events
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));

-- No table privilege for ai_user or ai_service: they reach this table only through the functions,
-- which run as the schema owner (SECURITY DEFINER; docs/security.md).

commit;
