-- Deploy agent-state:messages_functions to pg
-- Reworked after v0.1.0; the tagged script is deploy/messages_functions@v0.1.0.sql.
-- requires: messages
-- requires: sessions_functions
--
-- The functions and triggers of messages (its tables, indexes and row rules:
-- deploy/messages.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework messages_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

-- Append-only: no function updates or deletes a message (the cascade of a deleted session aside).
-- No table privilege for ai_user or ai_service: they reach this table only through the functions,
-- which run as the schema owner (SECURITY DEFINER; docs/security.md).

-- seq stays 1..n for raw writes too (only the schema owner writes raw: tenants hold no table
-- privilege, docs/security.md); these two triggers keep the messages
-- of a thread a gapless run 1..m with m <= last_seq, whoever writes: a message may only take a
-- number the session has handed out (seq <= last_seq) right after its predecessor, and last_seq
-- only moves up by one, or back by one when that number is still unused. The append follows
-- both rules (seq = last_seq); a restore from the archive inserts 1..n in order under a
-- restored last_seq = n. Anything else is AS004, not a later duplicate key or a gap.
-- The last_seq guard changes no column, so it runs AFTER the row is written (an error rolls the
-- statement back all the same): a BEFORE ROW UPDATE trigger would make each append's UPDATE of
-- the session lock the row once more, with a WAL record, before looking at its WHEN clause.
create or replace function ai._guard_message_seq() returns trigger
language plpgsql
as $$
begin
  -- Rows inserted earlier by the same statement are visible here (row-level BEFORE trigger).
  if new.seq > coalesce((select s.last_seq from ai.agent_sessions s where s.thread_id = new.thread_id), 0)
     or (new.seq > 1 and not exists (select from ai.session_messages m
                                     where m.thread_id = new.thread_id and m.seq = new.seq - 1)) then
    raise exception using errcode = 'AS004',
      message = format('message seq %s does not follow thread %s: append with ai.append_message_idempotent',
                       new.seq, new.thread_id);
  end if;
  return new;
end
$$;
comment on function ai._guard_message_seq() is 'Internal trigger: a message''s seq must be handed out by its session (<= last_seq) and follow the previous message.';

-- Replaced only when it differs from this definition (as pg_get_triggerdef prints it): CREATE OR
-- REPLACE TRIGGER locks the table against every writer (SHARE ROW EXCLUSIVE) and queues behind any
-- open transaction that wrote to it, so a deploy over an unchanged trigger takes no table lock; a
-- changed one waits at most lock_timeout (docs/operations.md, "Upgrading under a live fleet").
do $do$
begin
  if (select pg_catalog.pg_get_triggerdef(t.oid) from pg_catalog.pg_trigger t
      where t.tgrelid = 'ai.session_messages'::pg_catalog.regclass and t.tgname = 'session_messages_seq')
     is distinct from $t$CREATE TRIGGER session_messages_seq BEFORE INSERT ON ai.session_messages FOR EACH ROW EXECUTE FUNCTION ai._guard_message_seq()$t$ then
    if pg_catalog.current_setting('lock_timeout') = '0' then
      perform pg_catalog.set_config('lock_timeout', '5s', true);
    end if;
    create or replace trigger session_messages_seq
      before insert on ai.session_messages
      for each row execute function ai._guard_message_seq();
  end if;
end
$do$;

create or replace function ai._guard_last_seq() returns trigger
language plpgsql
as $$
begin
  -- Only "give back the number just taken" reaches here (the WHEN clause lets +1 through).
  if new.last_seq = old.last_seq - 1
     and not exists (select from ai.session_messages m where m.thread_id = old.thread_id and m.seq = old.last_seq) then
    return new;
  end if;
  raise exception using errcode = 'AS004',
    message = format('last_seq of thread %s is kept by ai.append_message_idempotent (%s to %s refused)',
                     old.thread_id, old.last_seq, new.last_seq);
end
$$;
comment on function ai._guard_last_seq() is 'Internal trigger: last_seq only moves up by one, or back by one before the number was used.';

-- Replaced only when it differs from this definition (as pg_get_triggerdef prints it): CREATE OR
-- REPLACE TRIGGER locks the table against every writer (SHARE ROW EXCLUSIVE) and queues behind any
-- open transaction that wrote to it, so a deploy over an unchanged trigger takes no table lock; a
-- changed one waits at most lock_timeout (docs/operations.md, "Upgrading under a live fleet").
do $do$
begin
  if (select pg_catalog.pg_get_triggerdef(t.oid) from pg_catalog.pg_trigger t
      where t.tgrelid = 'ai.agent_sessions'::pg_catalog.regclass and t.tgname = 'agent_sessions_last_seq')
     is distinct from $t$CREATE TRIGGER agent_sessions_last_seq AFTER UPDATE OF last_seq ON ai.agent_sessions FOR EACH ROW WHEN ((new.last_seq IS DISTINCT FROM (old.last_seq + 1))) EXECUTE FUNCTION ai._guard_last_seq()$t$ then
    if pg_catalog.current_setting('lock_timeout') = '0' then
      perform pg_catalog.set_config('lock_timeout', '5s', true);
    end if;
    create or replace trigger agent_sessions_last_seq
      after update of last_seq on ai.agent_sessions
      for each row when (new.last_seq is distinct from old.last_seq + 1)
      execute function ai._guard_last_seq();
  end if;
end
$do$;

-- The default token estimate: about four bytes of JSON text per token, the usual rule of thumb
-- for English with BPE tokenizers. Callers that know the real count pass it.
-- No SET search_path, so that it inlines into the append; every name, type and operator is qualified.
create or replace function ai.estimate_tokens(content jsonb) returns integer
language sql immutable parallel safe
as $$ select pg_catalog.ceil(pg_catalog.octet_length(content::pg_catalog.text)::pg_catalog.numeric
                             operator(pg_catalog./) 4.0::pg_catalog.numeric)::pg_catalog.int4 $$;
comment on function ai.estimate_tokens(jsonb) is
  'The token estimate used when a message comes without a token count: ceil(bytes of the JSON text / 4).';

create or replace function ai.message_key(thread_id text, role text, content jsonb, turn integer default null)
returns text
language plpgsql immutable parallel safe
as $$
begin
  -- A JSON array is an unambiguous encoding of the four fields (no separator can be forged).
  -- PL/pgSQL rather than SQL: this SQL body could not be inlined (convert_to is only stable),
  -- and a non-inlined SQL function is re-planned at every call (4x slower, measured).
  -- No SET search_path (it runs on every append); every name and type is qualified instead.
  return pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(
           pg_catalog.jsonb_build_array(thread_id, role, content, turn)::pg_catalog.text, 'UTF8')), 'hex');
end
$$;
comment on function ai.message_key(text, text, jsonb, integer) is
  'The default idempotency key of a message: hex sha256 over the JSON array [thread_id, role, content, turn].';

create or replace function ai.append_message_idempotent(
  thread_id text, role text, content jsonb, turn integer default null,
  idempotency_key text default null, token_count integer default null)
returns ai.appended_message
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_role alias for $2;
  a_content alias for $3;
  a_turn alias for $4;
  a_key alias for $5;
  a_tokens alias for $6;
  v_key text;
  v_now timestamptz := ai.now();
  v_owner text;
  v_status text;
  v_seq bigint;
  m ai.session_messages;
begin
  perform ai._check_thread_id(a_thread_id);
  if a_role is null or a_role not in ('system', 'user', 'assistant', 'tool_call', 'tool_result') then
    raise exception using errcode = 'AS002',
      message = format('role %s is not one of system, user, assistant, tool_call, tool_result',
                       coalesce(pg_catalog.quote_literal(a_role), 'NULL'));
  end if;
  perform ai._check_document(a_content, 'content');
  if a_key is not null then
    perform ai._check_text(a_key, 'idempotency_key', 255);
  end if;
  if a_tokens < 0 then
    raise exception using errcode = 'AS002', message = format('token_count must not be negative, not %s', a_tokens);
  end if;
  v_key := coalesce(a_key, ai.message_key(a_thread_id, a_role, a_content, a_turn));

  <<attempt>>
  for attempt in 1..2 loop
    -- A retry of an append that committed: return the original; no lock taken, nothing written.
    select * into m from ai.session_messages s where s.thread_id = a_thread_id and s.idempotency_key = v_key;
    if found then
      if m.role <> a_role or m.content <> a_content or m.turn is distinct from a_turn then
        raise exception using errcode = 'AS005',
          message = format('idempotency key %s of thread %s was used for a different message (seq %s)',
                           v_key, a_thread_id, m.seq);
      end if;
      return (m.thread_id, m.seq, m.owner, m.role, m.content, m.token_count, m.turn,
              m.idempotency_key, m.created_at, false)::ai.appended_message;
    end if;
    exit attempt when attempt = 2;

    -- Take the next number under the session row lock. Concurrent appends to this thread queue
    -- here; a concurrent append of this very message either committed before we got the lock
    -- (the insert below then meets its key) or waits for us.
    -- A session that another transaction creates and commits while the UPDATE runs is not in the
    -- UPDATE's snapshot but is in the next statement's: when the re-read finds it open, the
    -- UPDATE runs again (it then sees the row); only a closed session is AS004.
    for look in 1..3 loop
      update ai.agent_sessions s set last_seq = s.last_seq + 1, updated_at = v_now
      where s.thread_id = a_thread_id and s.status in ('active', 'waiting')
      returning s.owner, s.last_seq into v_owner, v_seq;
      exit when found;
      select s.status into v_status from ai.agent_sessions s where s.thread_id = a_thread_id;
      if not found then
        raise exception using errcode = 'AS001', message = format('thread %s not found', a_thread_id);
      end if;
      if v_status not in ('active', 'waiting') or look = 3 then
        raise exception using errcode = 'AS004',
          message = format('session %s is %s: no more messages', a_thread_id, v_status);
      end if;
    end loop;

    insert into ai.session_messages (thread_id, seq, owner, role, content, token_count, turn, idempotency_key, created_at)
    values (a_thread_id, v_seq, v_owner, a_role, a_content,
            coalesce(a_tokens, ai.estimate_tokens(a_content)), a_turn, v_key, v_now)
    on conflict (thread_id, idempotency_key) do nothing
    returning * into m;
    if found then
      return (m.thread_id, m.seq, m.owner, m.role, m.content, m.token_count, m.turn,
              m.idempotency_key, m.created_at, true)::ai.appended_message;
    end if;

    -- The same key committed between our first look and our lock: give the number back (we
    -- hold the row lock, so nobody took the next one) and return the original on the next turn.
    update ai.agent_sessions s set last_seq = s.last_seq - 1 where s.thread_id = a_thread_id;
  end loop attempt;

  -- Unreachable: the key was there a moment ago and messages are append-only.
  raise exception using errcode = 'XX000', message = 'append_message_idempotent: message vanished during a retry';
end
$$;
comment on function ai.append_message_idempotent(text, text, jsonb, integer, text, integer) is
  'Appends a message (role: system, user, assistant, tool_call or tool_result; content: JSON up to 1 MiB) and returns it with inserted = true. The idempotency key defaults to ai.message_key(thread_id, role, content, turn); a retry with the same key returns the original row with inserted = false and writes nothing. token_count defaults to ai.estimate_tokens(content). Safe under concurrent callers: seq stays gapless, one lock per call. AS001 unknown thread, AS002 bad argument, AS003 content too large, AS004 session finished, AS005 key reused for a different message.';

create or replace function ai.get_messages(thread_id text, after_seq bigint default 0, max_rows integer default 1000)
returns setof ai.session_messages
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
begin
  perform ai._check_limit(max_rows, 'max_rows');
  if after_seq is null or after_seq < 0 then
    raise exception using errcode = 'AS002',
      message = format('after_seq must be 0 or more, not %s', coalesce(after_seq::text, 'NULL'));
  end if;
  perform ai._session_owner(a_thread_id);

  return query
    select * from ai.session_messages m
    where m.thread_id = a_thread_id and m.seq > after_seq
    order by m.seq
    limit max_rows;
end
$$;
comment on function ai.get_messages(text, bigint, integer) is
  'A thread''s messages with seq > after_seq, in order, at most max_rows (1 to 10000). AS001 unknown thread, AS002 bad argument.';

-- Trigger functions need no EXECUTE grant to fire.
revoke execute on function ai._guard_message_seq(), ai._guard_last_seq() from public;
revoke execute on function ai.estimate_tokens(jsonb), ai.message_key(text, text, jsonb, integer),
  ai.append_message_idempotent(text, text, jsonb, integer, text, integer),
  ai.get_messages(text, bigint, integer) from public;
grant execute on function ai.estimate_tokens(jsonb), ai.message_key(text, text, jsonb, integer),
  ai.append_message_idempotent(text, text, jsonb, integer, text, integer),
  ai.get_messages(text, bigint, integer) to ai_user, ai_service;

commit;
