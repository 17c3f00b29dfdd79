-- Deploy agent-state:sessions_functions to pg
-- requires: sessions
-- requires: events
--
-- The functions and triggers of sessions (its tables, indexes and row rules:
-- deploy/sessions.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework sessions_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

-- added after v0.1.0 (deploy/sessions_functions.sql)
drop function ai._move_session_status(text, text);
drop function ai._session_as_read(ai.agent_sessions);
drop function ai._fence(text, bigint, bigint);
drop function ai._queue_fence_check(bigint, bigint);
-- these return ai.session since (issue 33); 0.1.0's return the table's row type
drop function ai.get_session(text);
drop function ai.create_session(text, jsonb);
drop function ai.set_session_status(text, text);
drop type ai.session;  -- their return type (restore_session, list_sessions and find_sessions are reverted before)

create or replace function ai._check_thread_id(thread_id text) returns void
language sql immutable parallel safe
as $$ select ai._check_text(thread_id, 'thread_id', 255) $$;
comment on function ai._check_thread_id(text) is 'Internal guard: raises AS002 unless thread_id is 1 to 255 characters.';

-- The owner of a thread the caller may see; AS001 when it does not exist or is another tenant's
-- (RLS hides those, so the two are one case). The guard that read-side functions start with.
create or replace function ai._session_owner(thread_id text) returns text
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

create or replace function ai.get_session(thread_id text) returns ai.agent_sessions
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

-- ---------------------------------------------------------------------------------------------

-- The allowed status changes, in one place:
--   active  -> waiting | completed | failed | cancelled
--   waiting -> active  | completed | failed | cancelled
--   completed, failed, cancelled: final.
-- Setting the status a session already has is a no-op, so a retried call succeeds.
create or replace function ai._session_transition_allowed(from_status text, to_status text) returns boolean
language sql immutable parallel safe
as $$
  select from_status = to_status
      or (from_status in ('active', 'waiting')
          and to_status in ('active', 'waiting', 'completed', 'failed', 'cancelled'))
$$;
comment on function ai._session_transition_allowed(text, text) is 'Internal: whether a session may move from one status to another.';

-- The same rule for raw UPDATEs (the schema owner's: tenants hold no table privilege): the table
-- itself refuses a forbidden move (a finished session stays finished). The WHEN clause keeps the
-- trigger off every update that leaves status alone.
-- The trigger runs AFTER the row is written (an error rolls the statement back all the same): a
-- BEFORE ROW UPDATE trigger would make each UPDATE of a session lock the row once more, with a WAL
-- record, before looking at its WHEN clause, and the guard changes no column.
create or replace function ai._guard_session_status() returns trigger
language plpgsql
as $$
begin
  if not ai._session_transition_allowed(old.status, new.status) then
    raise exception using errcode = 'AS004',
      message = format('session %s cannot go from %s to %s', old.thread_id, old.status, new.status);
  end if;
  return new;
end
$$;
comment on function ai._guard_session_status() is 'Internal trigger: refuses a status change the transition table forbids, however it is written.';

create or replace trigger agent_sessions_status_transition
  after update of status on ai.agent_sessions
  for each row when (old.status is distinct from new.status)
  execute function ai._guard_session_status();

-- The one place a session row is created (create_session, a first checkpoint or pending write of
-- a new thread, the target of a copy). ON CONFLICT without a target: the table has two unique
-- keys (thread_id, and (thread_id, owner) that child tables reference), and naming only one let
-- a concurrent create of the same thread by the same owner fail 23505 on the other instead of
-- doing nothing. Returns whether this call created the row (then with a start event); when not,
-- the row exists (the caller's, committed by a concurrent transaction, which the caller's next
-- statement sees; or another tenant's, which RLS hides).
create or replace function ai._start_session(thread_id text, owner text, config jsonb, start_payload jsonb)
returns boolean
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_owner alias for $2;
  a_config alias for $3;
  v_now timestamptz := ai.now();
begin
  insert into ai.agent_sessions (thread_id, owner, config, created_at, updated_at)
  values (a_thread_id, a_owner, a_config, v_now, v_now)
  on conflict do nothing;
  if not found then
    return false;
  end if;
  insert into ai.session_events (thread_id, owner, kind, payload, created_at)
  values (a_thread_id, a_owner, 'start', start_payload, v_now);
  return true;
end
$$;
comment on function ai._start_session(text, text, jsonb, jsonb) is 'Internal: creates a session row with its start event and returns true, or returns false when the thread id exists (whoever owns it). Safe against concurrent creates of the same thread.';

create or replace function ai.create_session(thread_id text default null, config jsonb default '{}')
returns ai.agent_sessions
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id text := coalesce($1, pg_catalog.gen_random_uuid()::text);
  a_config alias for $2;
  s ai.agent_sessions;
begin
  perform ai._check_thread_id(a_thread_id);
  perform ai._check_document(a_config, 'config', must_be_object => true);

  -- New: created with a start event. Ours already (a retry, or a concurrent create): returned
  -- unchanged. Another tenant's: RLS hides it, and all we may say is that the id is taken.
  perform ai._start_session(a_thread_id, ai.current_owner(), a_config,
                            pg_catalog.jsonb_build_object('config', a_config));
  select * into s from ai.agent_sessions a where a.thread_id = a_thread_id;
  if not found or (s.owner <> ai.current_owner() and not ai.sees_all_owners()) then
    raise exception using errcode = 'AS005',
      message = format('thread id %s is not available', a_thread_id),
      hint = 'pass NULL to get a fresh id';
  end if;
  return s;
end
$$;
comment on function ai.create_session(text, jsonb) is
  'Creates a session owned by the caller and records a start event; thread_id NULL makes a fresh UUID. Calling it again for a thread the caller owns (also concurrently) returns the existing row unchanged. AS002 bad argument, AS003 config too large, AS005 the id belongs to another tenant.';

create or replace function ai.set_session_status(thread_id text, status text) returns ai.agent_sessions
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_status alias for $2;
  v_now timestamptz := ai.now();
  v_from text;
  s ai.agent_sessions;
begin
  perform ai._check_thread_id(a_thread_id);
  if a_status is null or a_status not in ('active', 'waiting', 'completed', 'failed', 'cancelled') then
    raise exception using errcode = 'AS002',
      message = format('status %s is not one of active, waiting, completed, failed, cancelled',
                       coalesce(pg_catalog.quote_literal(a_status), 'NULL'));
  end if;

  select * into s from ai.agent_sessions a where a.thread_id = a_thread_id for no key update;
  if not found then
    raise exception using errcode = 'AS001', message = format('thread %s not found', a_thread_id);
  end if;
  if s.status = a_status then
    return s;
  end if;
  if not ai._session_transition_allowed(s.status, a_status) then
    raise exception using errcode = 'AS004',
      message = format('session %s cannot go from %s to %s', a_thread_id, s.status, a_status);
  end if;

  v_from := s.status;
  update ai.agent_sessions a
  set status = a_status,
      updated_at = v_now,
      completed_at = case when a_status in ('completed', 'failed', 'cancelled') then v_now end
  where a.thread_id = a_thread_id
  returning * into s;

  insert into ai.session_events (thread_id, owner, kind, payload, created_at)
  values (s.thread_id, s.owner, 'status', pg_catalog.jsonb_build_object('from', v_from, 'to', a_status), v_now);
  return s;
end
$$;
comment on function ai.set_session_status(text, text) is
  'Moves a session to a new status (active, waiting, completed, failed, cancelled) and records a status event. active and waiting may go anywhere; completed, failed and cancelled are final; the same status again is a no-op. AS001 unknown thread, AS002 unknown status, AS004 transition not allowed.';

revoke execute on function ai._guard_session_status() from public;  -- a trigger needs no grant
revoke execute on function ai._session_transition_allowed(text, text), ai.create_session(text, jsonb),
  ai.set_session_status(text, text), ai._start_session(text, text, jsonb, jsonb) from public;
grant execute on function ai.create_session(text, jsonb), ai.set_session_status(text, text)
to ai_user, ai_service;

commit;
