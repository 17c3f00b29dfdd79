-- Deploy agent-state:session_items_functions to pg
-- requires: session_items
-- requires: messages_functions
--
-- The functions and triggers of session items (its tables, indexes and row rules:
-- deploy/session_items.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework session_items_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

-- A JSON number that must fit an integer, or NULL; AS002 otherwise (no cast error reaches the caller).
create or replace function ai._json_integer(value jsonb, argument text) returns integer
language plpgsql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
declare
  v numeric;
begin
  if value is null or pg_catalog.jsonb_typeof(value) = 'null' then
    return null;
  end if;
  if pg_catalog.jsonb_typeof(value) = 'number' then
    v := value::numeric;
    if v = pg_catalog.trunc(v) and v between -2147483648 and 2147483647 then
      return v::integer;
    end if;
  end if;
  raise exception using errcode = 'AS002', message = format('%s must be an integer, not %s', argument, value::text);
end
$$;
comment on function ai._json_integer(jsonb, text) is 'Internal guard: a JSON integer argument as integer (NULL for absent or null); AS002 for anything else.';

create or replace function ai.append_messages(thread_id text, messages jsonb)
returns setof ai.appended_message
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  v_item jsonb;
  v_turn integer;
  v_tokens integer;
begin
  perform ai._check_thread_id(a_thread_id);
  perform ai._check_document(messages, 'messages');
  if pg_catalog.jsonb_typeof(messages) <> 'array' then
    raise exception using errcode = 'AS002',
      message = format('messages must be a JSON array, not %s', pg_catalog.jsonb_typeof(messages));
  end if;
  for v_item in select e from pg_catalog.jsonb_array_elements(messages) e loop
    if pg_catalog.jsonb_typeof(v_item) <> 'object' or not v_item ? 'role' or not v_item ? 'content' then
      raise exception using errcode = 'AS002',
        message = 'each message must be a JSON object with role and content (and optionally turn, idempotency_key, token_count)';
    end if;
    v_turn := ai._json_integer(v_item -> 'turn', 'turn');
    v_tokens := ai._json_integer(v_item -> 'token_count', 'token_count');
    return next ai.append_message_idempotent(a_thread_id, v_item ->> 'role', v_item -> 'content', v_turn,
                                              v_item ->> 'idempotency_key', v_tokens);
  end loop;
end
$$;
comment on function ai.append_messages(text, jsonb) is
  'Appends a JSON array of messages ({role, content, turn?, idempotency_key?, token_count?}) to a thread in one transaction, each as ai.append_message_idempotent does, and returns them in order (inserted = false for a retried one). All or none: one bad message writes nothing. AS001 unknown thread, AS002 bad argument, AS003 too large, AS004 session finished, AS005 key reused for a different message.';

-- v0.1.0's visible_messages returned every message when max_rows was NULL and had no cursor; a
-- v0.1.0 caller's arguments resolve to this one and get one page.
drop function if exists ai.visible_messages(text, integer);
create or replace function ai.visible_messages(thread_id text, max_rows integer default 1000, before_seq bigint default null)
returns setof ai.session_messages
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_before alias for $3;
  v_max_rows integer := coalesce($2, 1000);
begin
  if v_max_rows < 0 or v_max_rows > 10000 then
    raise exception using errcode = 'AS002', message = format('max_rows must be between 0 and 10000, not %s', v_max_rows);
  end if;
  perform ai._session_owner(a_thread_id);
  -- Newest first through the primary key, then back into order.
  return query
    select v.* from (
      select m.* from ai.session_messages m
      where m.thread_id = a_thread_id
        and (a_before is null or m.seq < a_before)
        and not (m.role = 'system' and m.content ? 'compaction')
        and not exists (select from ai.hidden_messages h where h.thread_id = m.thread_id and h.seq = m.seq)
      order by m.seq desc
      limit v_max_rows) v
    order by v.seq;
end
$$;
comment on function ai.visible_messages(text, integer, bigint) is
  'The newest max_rows messages of a thread (0 to 10000; NULL or omitted: 1000) that are not hidden and not compaction summaries, before seq before_seq when given, oldest first; the page before: before_seq = the first row''s seq. AS001 unknown thread, AS002 bad argument.';

create or replace function ai.hide_last_message(thread_id text) returns ai.session_messages
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  v_owner text;
  m ai.session_messages;
begin
  perform ai._check_thread_id(a_thread_id);
  -- The session row lock orders concurrent pops (and appends) of the thread.
  select s.owner into v_owner from ai.agent_sessions s where s.thread_id = a_thread_id for no key update;
  if not found then
    raise exception using errcode = 'AS001', message = format('thread %s not found', a_thread_id);
  end if;
  select * into m from ai.session_messages x
  where x.thread_id = a_thread_id
    and not (x.role = 'system' and x.content ? 'compaction')
    and not exists (select from ai.hidden_messages h where h.thread_id = x.thread_id and h.seq = x.seq)
  order by x.seq desc
  limit 1;
  if not found then
    return null;
  end if;
  insert into ai.hidden_messages (thread_id, seq, owner, hidden_at) values (a_thread_id, m.seq, v_owner, ai.now());
  return m;
end
$$;
comment on function ai.hide_last_message(text) is
  'Hides the newest visible message of a thread and returns it (NULL when none is visible); the message itself stays. Concurrent calls hide different messages. AS001 unknown thread, AS002 bad argument.';

create or replace function ai.hide_messages(thread_id text) returns bigint
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  v_owner text;
  v_count bigint;
  v_now timestamptz;
begin
  perform ai._check_thread_id(a_thread_id);
  select s.owner into v_owner from ai.agent_sessions s where s.thread_id = a_thread_id for no key update;
  if not found then
    raise exception using errcode = 'AS001', message = format('thread %s not found', a_thread_id);
  end if;
  -- Citus runs this INSERT ... SELECT on the thread's shard when the row's thread_id is the
  -- source's column (not the argument) and no VOLATILE function is called in it; otherwise it goes
  -- through the coordinator and COPY, which row level security refuses (and a shard would read its
  -- own wall clock, never the test clock): the clock is read first, on the caller's node
  v_now := ai.now();
  insert into ai.hidden_messages (thread_id, seq, owner, hidden_at)
  select m.thread_id, m.seq, v_owner, v_now from ai.session_messages m
  where m.thread_id = a_thread_id
    and not (m.role = 'system' and m.content ? 'compaction')
    and not exists (select from ai.hidden_messages h where h.thread_id = m.thread_id and h.seq = m.seq);
  get diagnostics v_count = row_count;
  return v_count;
end
$$;
comment on function ai.hide_messages(text) is
  'Hides every visible message of a thread (the messages stay) and returns how many it hid; 0 on a retry. AS001 unknown thread, AS002 bad argument.';

revoke execute on function ai._json_integer(jsonb, text) from public;
revoke execute on function ai.append_messages(text, jsonb), ai.visible_messages(text, integer, bigint),
  ai.hide_last_message(text), ai.hide_messages(text) from public;
grant execute on function ai.append_messages(text, jsonb), ai.visible_messages(text, integer, bigint),
  ai.hide_last_message(text), ai.hide_messages(text) to ai_user, ai_service;

commit;
