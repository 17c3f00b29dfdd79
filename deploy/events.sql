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

create function ai._check_event_kind(kind text) returns void
language plpgsql immutable parallel safe
as $$
begin
  if kind is null or kind !~ '^[a-z][a-z0-9_.]{0,62}$' then
    raise exception using errcode = 'AS002',
      message = format('event kind %s is not a lowercase name (a-z, 0-9, _ and ., at most 63 characters)',
                       coalesce(pg_catalog.quote_literal(kind), 'NULL'));
  end if;
end
$$;
comment on function ai._check_event_kind(text) is 'Internal guard: raises AS002 unless kind is a lowercase name of at most 63 characters.';

create function ai.record_event(thread_id text, kind text, payload jsonb default '{}')
returns ai.session_events
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_kind alias for $2;
  a_payload alias for $3;
  v_owner text;
  e ai.session_events;
begin
  perform ai._check_event_kind(a_kind);
  perform ai._check_document(a_payload, 'payload');
  if a_kind in ('start', 'status') then
    -- Written by create_session and set_session_status only, so the stream can be trusted.
    raise exception using errcode = 'AS002',
      message = format('event kind %s is reserved for agent-state itself', a_kind);
  end if;

  v_owner := ai._session_owner(a_thread_id);

  insert into ai.session_events (thread_id, owner, kind, payload, created_at)
  values (a_thread_id, v_owner, a_kind, a_payload, ai.now())
  returning * into e;
  return e;
end
$$;
comment on function ai.record_event(text, text, jsonb) is
  'Appends an event (kind: a lowercase name such as tool_call or error; payload: a JSON document up to 1 MiB) to a thread''s stream and returns it. Events are allowed in every status, finished sessions included. The kinds start and status are reserved (written by create_session and set_session_status). AS001 unknown thread, AS002 bad or reserved kind, AS003 payload too large.';

create function ai.get_events(thread_id text, after_event_id bigint default 0, max_rows integer default 1000,
                              kinds text[] default null)
returns setof ai.session_events
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
begin
  perform ai._check_limit(max_rows, 'max_rows');
  if after_event_id is null or after_event_id < 0 then
    raise exception using errcode = 'AS002',
      message = format('after_event_id must be 0 or more, not %s', coalesce(after_event_id::text, 'NULL'));
  end if;
  perform ai._session_owner(a_thread_id);

  return query
    select * from ai.session_events e
    where e.thread_id = a_thread_id and e.event_id > after_event_id
      and (kinds is null or e.kind = any (kinds))
    order by e.event_id
    limit max_rows;
end
$$;
comment on function ai.get_events(text, bigint, integer, text[]) is
  'A thread''s events after after_event_id, oldest first, at most max_rows (1 to 10000), optionally only the given kinds. AS001 unknown thread, AS002 bad argument.';

revoke execute on function ai._check_event_kind(text), ai.record_event(text, text, jsonb),
  ai.get_events(text, bigint, integer, text[]) from public;
grant execute on function ai.record_event(text, text, jsonb), ai.get_events(text, bigint, integer, text[])
to ai_user, ai_service;

commit;
