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
-- privilege, docs/security.md): a message may only take seq 1 or the number right after a message
-- of its thread (issue 20: the number comes from the messages' own primary key; the session row
-- holds no counter). Anything else is AS004, not a later
-- duplicate key or a gap. A restore from the archive inserts 1..n in order.
create or replace function ai._guard_message_seq() returns trigger
language plpgsql
as $$
begin
  -- Rows inserted earlier by the same statement are visible here (row-level BEFORE trigger).
  if new.seq > 1 and not exists (select from ai.session_messages m
                                 where m.thread_id = new.thread_id and m.seq = new.seq - 1) then
    raise exception using errcode = 'AS004',
      message = format('message seq %s does not follow thread %s: append with ai.append_message_idempotent',
                       new.seq, new.thread_id);
  end if;
  return new;
end
$$;
comment on function ai._guard_message_seq() is 'Internal trigger: a message''s seq is 1 or follows the previous message of its thread.';

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

-- 0.1.0 kept a counter, agent_sessions.last_seq, under this trigger's guard; appends no longer
-- write the session row (ai.get_session computes last_seq) and the change sessions_dead_columns
-- drops the column: its guard goes. (revert/messages_functions.sql restores both.)
-- (DROP TRIGGER locks the table: only where the trigger is still there, and bounded.)
do $do$
begin
  if exists (select from pg_catalog.pg_trigger t
             where t.tgrelid = 'ai.agent_sessions'::pg_catalog.regclass and t.tgname = 'agent_sessions_last_seq') then
    if pg_catalog.current_setting('lock_timeout') = '0' then
      perform pg_catalog.set_config('lock_timeout', '5s', true);
    end if;
    drop trigger agent_sessions_last_seq on ai.agent_sessions;
  end if;
end
$do$;
drop function if exists ai._guard_last_seq();

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

-- A v0.1.0 signature without the fence arguments: replaced by the one below, whose two new
-- arguments come last with defaults, so a v0.1.0 caller's SQL still resolves.
drop function if exists ai.append_message_idempotent(text, text, jsonb, integer, text, integer);

-- The append writes one row and nothing else: no session row update (issue 20), so a claim's thread
-- lock (the session row, FOR NO KEY UPDATE SKIP LOCKED) never meets an append in flight, and a
-- worker stalled inside a fenced transaction that appended keeps nobody from claiming the thread.
-- seq is the thread's newest seq + 1, read from the primary key in the INSERT itself. Two appends of
-- one thread that race take the same number: the second one's INSERT waits (ON CONFLICT) for the
-- first to end, does nothing if it committed, and the next turn takes the next number; so seqs stay
-- gapless and distinct, and appends of one thread still go one at a time, as they did under the
-- session row lock. (A stalled transaction's insert in flight therefore makes the next append of
-- that thread wait until it ends: docs/queue.md.) The session's status is read without a lock: an
-- append racing the session's completion may still land; one after it is AS004.
-- job_id + fencing_token make it a fenced write (ai._fence: ai.fenced_write, and the job must be
-- the thread's): a worker's append is one call in autocommit instead of BEGIN; fenced_write;
-- append; COMMIT.
create or replace function ai.append_message_idempotent(
  thread_id text, role text, content jsonb, turn integer default null,
  idempotency_key text default null, token_count integer default null,
  job_id bigint default null, fencing_token bigint default null)
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
  a_job alias for $7;
  a_token alias for $8;
  v_key text;
  v_now timestamptz := ai.now();
  v_status text;
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
  if a_job is not null or a_token is not null then
    perform ai._fence(a_thread_id, a_job, a_token);
  end if;
  v_key := coalesce(a_key, ai.message_key(a_thread_id, a_role, a_content, a_turn));

  -- One statement for an append that is not a retry (issue 34 item 8): the session's owner and
  -- status read by the INSERT itself, the key's unique index probed once, in the INSERT, not in a
  -- lookup before it. Each turn that inserts nothing met this key (a retry: the original is
  -- returned), an unknown or finished session (AS001, AS004), or another append of the thread that
  -- took the seq and committed (the next turn takes the next one): bounded by the appends that
  -- overtake this one.
  loop
    insert into ai.session_messages (thread_id, seq, owner, role, content, token_count, turn, idempotency_key, created_at)
    select a_thread_id,
           coalesce((select max(x.seq) from ai.session_messages x where x.thread_id = a_thread_id), 0) + 1,
           s.owner, a_role, a_content, coalesce(a_tokens, ai.estimate_tokens(a_content)), a_turn, v_key, v_now
    from ai.agent_sessions s
    where s.thread_id = a_thread_id and s.status in ('active', 'waiting')
    on conflict do nothing
    returning * into m;
    if found then
      return (m.thread_id, m.seq, m.owner, m.role, m.content, m.token_count, m.turn,
              m.idempotency_key, m.created_at, true)::ai.appended_message;
    end if;
    -- A retry of an append that committed: return the original; nothing written.
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
    select s.status into v_status from ai.agent_sessions s where s.thread_id = a_thread_id;
    if not found then
      raise exception using errcode = 'AS001', message = format('thread %s not found', a_thread_id);
    end if;
    if v_status not in ('active', 'waiting') then
      raise exception using errcode = 'AS004',
        message = format('session %s is %s: no more messages', a_thread_id, v_status);
    end if;
  end loop;
  -- Unreachable: the loop returns or raises.
  raise exception using errcode = 'XX000', message = 'append_message_idempotent: left its loop';
end
$$;
comment on function ai.append_message_idempotent(text, text, jsonb, integer, text, integer, bigint, bigint) is
  'Appends a message (role: system, user, assistant, tool_call or tool_result; content: JSON up to 1 MiB) and returns it with inserted = true. The idempotency key defaults to ai.message_key(thread_id, role, content, turn); a retry with the same key returns the original row with inserted = false and writes nothing. token_count defaults to ai.estimate_tokens(content). Safe under concurrent callers: seq stays gapless; writes the message row only (not the session row). job_id + fencing_token make it a fenced write (ai._fence: the caller holds the job, checked again at commit, and the job is the thread''s): one call for a worker. AS001 unknown thread, AS002 bad argument, AS003 content too large, AS004 session finished, AS005 key reused for a different message, AS006 lease lost.';

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
revoke execute on function ai._guard_message_seq() from public;
revoke execute on function ai.estimate_tokens(jsonb), ai.message_key(text, text, jsonb, integer),
  ai.append_message_idempotent(text, text, jsonb, integer, text, integer, bigint, bigint),
  ai.get_messages(text, bigint, integer) from public;
grant execute on function ai.estimate_tokens(jsonb), ai.message_key(text, text, jsonb, integer),
  ai.append_message_idempotent(text, text, jsonb, integer, text, integer, bigint, bigint),
  ai.get_messages(text, bigint, integer) to ai_user, ai_service;

commit;
