-- Deploy agent-state:events_functions to pg
-- requires: events
-- requires: sessions_functions
--
-- The functions and triggers of events (its tables, indexes and row rules:
-- deploy/events.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework events_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

create or replace function ai._check_event_kind(kind text) returns void
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

create or replace function ai.record_event(thread_id text, kind text, payload jsonb default '{}')
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

create or replace function ai.get_events(thread_id text, after_event_id bigint default 0, max_rows integer default 1000,
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
