-- Deploy agent-state:sessions to pg
-- requires: owners
-- requires: clock
begin;

-- One row per agent run. thread_id is global (a caller may bring its own, e.g. LangGraph's),
-- so the one thing a tenant can learn about another's thread is that its id is taken.
-- (thread_id, owner) is unique too: every child table references that pair, which makes it
-- impossible to hang a row of one tenant off another tenant's thread.
create table ai.agent_sessions (
  thread_id text primary key check (pg_catalog.char_length(thread_id) between 1 and 255),
  owner text not null default ai.current_owner(),
  status text not null default 'active'
    check (status in ('active', 'waiting', 'completed', 'failed', 'cancelled')),
  config jsonb not null default '{}' check (pg_catalog.jsonb_typeof(config) = 'object'),
  current_checkpoint_id text,
  last_seq bigint not null default 0 check (last_seq >= 0),
  created_at timestamptz not null default ai.now(),
  updated_at timestamptz not null default ai.now(),
  completed_at timestamptz,
  constraint agent_sessions_thread_owner unique (thread_id, owner),
  constraint agent_sessions_completed_at check ((completed_at is not null) = (status in ('completed', 'failed', 'cancelled')))
) with (fillfactor = 80);  -- room for HOT updates: every append rewrites last_seq and updated_at
comment on table ai.agent_sessions is 'One row per agent run (thread): owner, status, configuration, message counter and current checkpoint.';
comment on column ai.agent_sessions.last_seq is 'The seq of the newest message; appends bump it under the row lock, so seq has no gaps.';
comment on column ai.agent_sessions.current_checkpoint_id is 'The newest checkpoint of the root namespace (kept by the checkpoint functions).';

-- Not on updated_at: every append rewrites it, and an index on it would forbid HOT updates.
create index agent_sessions_owner_created on ai.agent_sessions (owner, created_at desc);

alter table ai.agent_sessions enable row level security;
alter table ai.agent_sessions force row level security;
create policy agent_sessions_by_owner on ai.agent_sessions
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));

-- No table privilege for ai_user or ai_service: they reach this table only through the functions,
-- which run as the schema owner (SECURITY DEFINER; docs/security.md).

create function ai._check_thread_id(thread_id text) returns void
language sql immutable parallel safe
as $$ select ai._check_text(thread_id, 'thread_id', 255) $$;
comment on function ai._check_thread_id(text) is 'Internal guard: raises AS002 unless thread_id is 1 to 255 characters.';

-- The owner of a thread the caller may see; AS001 when it does not exist or is another tenant's
-- (RLS hides those, so the two are one case). The guard that read-side functions start with.
create function ai._session_owner(thread_id text) returns text
language plpgsql stable
as $$
declare
  v_owner text;
begin
  perform ai._check_thread_id(_session_owner.thread_id);
  select s.owner into v_owner from ai.agent_sessions s where s.thread_id = _session_owner.thread_id;
  if not found then
    raise exception using errcode = 'AS001', message = format('thread %s not found', _session_owner.thread_id);
  end if;
  return v_owner;
end
$$;
comment on function ai._session_owner(text) is 'Internal guard: the owner of a visible thread; AS002 for a bad id, AS001 when not found (or another tenant''s).';

create function ai.get_session(thread_id text) returns ai.agent_sessions
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  s ai.agent_sessions;
begin
  perform ai._check_thread_id(get_session.thread_id);
  select * into s from ai.agent_sessions a where a.thread_id = get_session.thread_id;
  if not found then
    raise exception using errcode = 'AS001', message = format('thread %s not found', get_session.thread_id);
  end if;
  return s;
end
$$;
comment on function ai.get_session(text) is
  'The session row of a thread. Raises AS001 when the thread does not exist or belongs to another tenant.';

revoke execute on function ai._check_thread_id(text), ai._session_owner(text), ai.get_session(text) from public;
grant execute on function ai.get_session(text)
to ai_user, ai_service;

commit;
