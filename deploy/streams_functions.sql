-- Deploy agent-state:streams_functions to pg
-- Reworked after v0.1.0; the tagged script is deploy/streams_functions@v0.1.0.sql.
-- requires: streams
-- requires: messages_functions
--
-- The functions and triggers of streams (its tables, indexes and row rules:
-- deploy/streams.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework streams_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

-- The stream's NOTIFY channel: 'ai_stream_' and a hash of the two ids under the key of the queue
-- channels (ai.notify_key, readable by the schema owner only), so nobody computes the channel of a
-- stream get_stream does not show them, and the empty payload tells a listener nothing.
create or replace function ai._stream_channel(thread_id text, stream_key text) returns text
language sql stable
set search_path = pg_catalog, pg_temp
as $$
  select 'ai_stream_' operator(pg_catalog.||) pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(
           k.key operator(pg_catalog.||) ':' operator(pg_catalog.||) pg_catalog.jsonb_build_array(thread_id, stream_key)::text,
           'UTF8')), 'hex'), 32)
  from ai.notify_key k
$$;
comment on function ai._stream_channel(text, text) is 'Internal: the channel append_stream_chunks notifies for a stream (get_stream returns it to those who may see the stream).';

create or replace function ai._stream_state(s ai.message_streams, stale_after interval) returns ai.stream_state
language sql stable
set search_path = pg_catalog, pg_temp
as $$
  select (s.thread_id, s.stream_key, s.owner, s.role, s.turn, s.status, s.last_chunk, s.total_bytes, s.job_id,
          s.opened_at, s.last_chunk_at, s.closed_at, s.message_seq,
          s.status = 'open' and coalesce(s.last_chunk_at, s.opened_at) < ai.now() - stale_after,
          ai._stream_channel(s.thread_id, s.stream_key))::ai.stream_state
$$;
comment on function ai._stream_state(ai.message_streams, interval) is 'Internal: a stream row as ai.stream_state.';

create or replace function ai._check_stream_args(thread_id text, stream_key text)
returns void
language plpgsql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
begin
  perform ai._check_thread_id(thread_id);
  perform ai._check_text(stream_key, 'stream_key', 200);
end
$$;
comment on function ai._check_stream_args(text, text) is 'Internal guard of the stream calls: the thread id and the stream key (the job and its token: ai._fence).';

-- The stream row, locked for a write (its writes queue on it); AS001 when not found.
create or replace function ai._lock_stream(thread_id text, stream_key text) returns ai.message_streams
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  s ai.message_streams;
begin
  select * into s from ai.message_streams m
  where m.thread_id = _lock_stream.thread_id and m.stream_key = _lock_stream.stream_key
  for update;
  if not found then
    raise exception using errcode = 'AS001',
      message = format('stream %s of thread %s not found', _lock_stream.stream_key, _lock_stream.thread_id);
  end if;
  return s;
end
$$;
comment on function ai._lock_stream(text, text) is 'Internal: the stream row, locked FOR UPDATE; AS001 when not found (or another tenant''s).';

-- 'async': this transaction's commit does not wait for the WAL flush. A writer crash loses nothing
-- it was told is stored; a database crash may lose the last fraction of a second of an open stream.
create or replace function ai._set_stream_durability(durability text) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if durability is null or durability not in ('sync', 'async') then
    raise exception using errcode = 'AS002',
      message = format('durability %s is not sync or async', coalesce(pg_catalog.quote_literal(durability), 'NULL'));
  end if;
  if durability = 'async' then
    perform pg_catalog.set_config('synchronous_commit', 'off', true);
  end if;
end
$$;
comment on function ai._set_stream_durability(text) is 'Internal: AS002 unless durability is sync or async; async turns synchronous_commit off for the transaction.';

create or replace function ai.open_stream(thread_id text, stream_key text, role text default 'assistant', turn integer default null,
                               job_id bigint default null, fencing_token bigint default null,
                               durability text default 'sync')
returns ai.stream_state
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_key alias for $2;
  a_role alias for $3;
  a_turn alias for $4;
  a_job alias for $5;
  a_token alias for $6;
  a_durability alias for $7;
  v_owner text;
  s ai.message_streams;
begin
  perform ai._check_stream_args(a_thread_id, a_key);
  perform ai._set_stream_durability(a_durability);
  if a_role is null or a_role not in ('system', 'user', 'assistant', 'tool_call', 'tool_result') then
    raise exception using errcode = 'AS002',
      message = format('role %s is not one of system, user, assistant, tool_call, tool_result',
                       coalesce(pg_catalog.quote_literal(a_role), 'NULL'));
  end if;
  perform ai._fence(a_thread_id, a_job, a_token);
  v_owner := ai._session_owner(a_thread_id);
  insert into ai.message_streams as m (thread_id, stream_key, owner, role, turn, job_id, opened_at)
  values (a_thread_id, a_key, v_owner, a_role, a_turn, a_job, ai.now())
  on conflict (thread_id, stream_key) do nothing
  returning * into s;
  if not found then
    -- Opened before (a retry, or the next worker taking over): the stream as it is.
    select * into s from ai.message_streams m where m.thread_id = a_thread_id and m.stream_key = a_key;
  end if;
  return ai._stream_state(s, interval '30 seconds');
end
$$;
comment on function ai.open_stream(text, text, text, integer, bigint, bigint, text) is
  'Opens a stream for a message of a thread (role, optional turn) and returns it; opening the same stream_key again returns the stream as it is (last_chunk tells a writer where to go on). job_id + fencing_token make it a fenced write (ai._fence: the caller holds the job, and the job is the thread''s); durability ''async'' as for ai.append_stream_chunks. AS001 unknown thread, AS002 bad argument, AS006 lease lost.';

create or replace function ai.append_stream_chunks(thread_id text, stream_key text, first_chunk integer, chunks text[],
                                        job_id bigint default null, fencing_token bigint default null,
                                        durability text default 'sync')
returns integer
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_key alias for $2;
  a_first alias for $3;
  a_chunks alias for $4;
  a_job alias for $5;
  a_token alias for $6;
  a_durability alias for $7;
  v_count integer := coalesce(pg_catalog.cardinality(a_chunks), 0);
  v_now timestamptz := ai.now();
  v_new integer;
  v_bytes bigint;
  s ai.message_streams;
begin
  perform ai._check_stream_args(a_thread_id, a_key);
  if a_first is null or a_first < 1 then
    raise exception using errcode = 'AS002',
      message = format('first_chunk must be 1 or more, not %s', coalesce(a_first::text, 'NULL'));
  end if;
  if a_chunks is null or v_count = 0 or pg_catalog.array_position(a_chunks, null) is not null then
    raise exception using errcode = 'AS002', message = 'chunks must be a non-empty array without NULLs';
  end if;
  perform ai._set_stream_durability(a_durability);
  perform ai._fence(a_thread_id, a_job, a_token);
  s := ai._lock_stream(a_thread_id, a_key);
  if s.status <> 'open' then
    raise exception using errcode = 'AS051',
      message = format('stream %s of thread %s is %s: no more chunks', a_key, a_thread_id, s.status);
  end if;
  if a_first > s.last_chunk + 1 then
    raise exception using errcode = 'AS050',
      message = format('stream %s of thread %s: chunk %s does not follow chunk %s', a_key, a_thread_id, a_first, s.last_chunk);
  end if;
  -- Chunks up to last_chunk are stored already (a retried batch): only the rest is new.
  v_new := a_first + v_count - 1 - s.last_chunk;
  if v_new <= 0 then
    return s.last_chunk;
  end if;
  select coalesce(sum(pg_catalog.octet_length(c)), 0) into v_bytes
  from pg_catalog.unnest(a_chunks[v_count - v_new + 1:v_count]) c;
  if s.total_bytes + v_bytes > ai._max_document_bytes() then
    raise exception using errcode = 'AS003',
      message = format('stream %s of thread %s would be %s bytes, over the limit of %s', a_key, a_thread_id,
                       s.total_bytes + v_bytes, ai._max_document_bytes());
  end if;
  insert into ai.stream_batches (thread_id, stream_key, first_chunk, owner, chunks, created_at)
  values (a_thread_id, a_key, s.last_chunk + 1, s.owner, a_chunks[v_count - v_new + 1:v_count], v_now);
  update ai.message_streams m
  set last_chunk = s.last_chunk + v_new, total_bytes = s.total_bytes + v_bytes, last_chunk_at = v_now
  where m.thread_id = a_thread_id and m.stream_key = a_key;
  perform pg_catalog.pg_notify(ai._stream_channel(a_thread_id, a_key), '');
  return s.last_chunk + v_new;
end
$$;
comment on function ai.append_stream_chunks(text, text, integer, text[], bigint, bigint, text) is
  'Stores chunks first_chunk, first_chunk + 1, ... of an open stream in one call and returns the stream''s last chunk number. Chunks already stored (a retried batch) are skipped; notifies the stream''s channel. The whole stream is limited to 1 MiB of text. durability ''async'' commits this transaction with synchronous_commit off (a database crash may lose the newest chunks; a writer crash loses none it was told are stored). AS001 unknown stream, AS002 bad argument, AS003 too large, AS050 a gap after the last chunk, AS051 stream finished or abandoned, AS006 lease lost.';

create or replace function ai.finish_stream(thread_id text, stream_key text, job_id bigint default null,
                                 fencing_token bigint default null)
returns ai.appended_message
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_key alias for $2;
  a_job alias for $3;
  a_token alias for $4;
  v_text text;
  m ai.appended_message;
  s ai.message_streams;
  v_now timestamptz;
begin
  perform ai._check_stream_args(a_thread_id, a_key);
  perform ai._fence(a_thread_id, a_job, a_token);
  s := ai._lock_stream(a_thread_id, a_key);
  if s.status = 'abandoned' then
    raise exception using errcode = 'AS051',
      message = format('stream %s of thread %s was abandoned: it cannot be finished', a_key, a_thread_id);
  end if;
  select coalesce(pg_catalog.string_agg(pg_catalog.array_to_string(b.chunks, ''), '' order by b.first_chunk), '') into v_text
  from ai.stream_batches b where b.thread_id = a_thread_id and b.stream_key = a_key;
  -- The stream key is the message's idempotency key: a second finish returns the same message.
  m := ai.append_message_idempotent(a_thread_id, s.role, pg_catalog.to_jsonb(v_text), s.turn, 'stream:' || a_key);
  if s.status = 'open' then
    -- the clock read first, not inside the UPDATE: Citus refuses a VOLATILE function there
    v_now := ai.now();
    update ai.message_streams x set status = 'finished', closed_at = v_now, message_seq = m.seq
    where x.thread_id = a_thread_id and x.stream_key = a_key;
    perform pg_catalog.pg_notify(ai._stream_channel(a_thread_id, a_key), '');
  end if;
  return m;
end
$$;
comment on function ai.finish_stream(text, text, bigint, bigint) is
  'Finishes a stream: its chunks, in order, become one message (content: the text as a JSON string) appended through ai.append_message_idempotent with idempotency key ''stream:'' || stream_key, exactly once; a second call returns the same message (inserted = false). Another worker may finish a stale stream. AS001 unknown stream, AS004 session finished, AS051 the stream was abandoned, AS006 lease lost.';

create or replace function ai.abandon_stream(thread_id text, stream_key text, job_id bigint default null,
                                  fencing_token bigint default null)
returns ai.stream_state
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_key alias for $2;
  s ai.message_streams;
  v_now timestamptz;
begin
  perform ai._check_stream_args(a_thread_id, a_key);
  perform ai._fence(a_thread_id, $3, $4);
  s := ai._lock_stream(a_thread_id, a_key);
  if s.status = 'finished' then
    raise exception using errcode = 'AS051',
      message = format('stream %s of thread %s was finished: it cannot be abandoned', a_key, a_thread_id);
  end if;
  if s.status = 'open' then
    v_now := ai.now();  -- read first, not inside the UPDATE (see finish_stream)
    update ai.message_streams x set status = 'abandoned', closed_at = v_now
    where x.thread_id = a_thread_id and x.stream_key = a_key
    returning * into s;
    perform pg_catalog.pg_notify(ai._stream_channel(a_thread_id, a_key), '');
  end if;
  return ai._stream_state(s, interval '30 seconds');
end
$$;
comment on function ai.abandon_stream(text, text, bigint, bigint) is
  'Closes an open stream without a message (its chunks stay readable); abandoning it again is a no-op. AS001 unknown stream, AS051 it was finished, AS006 lease lost.';

create or replace function ai.get_stream(thread_id text, stream_key text, stale_after interval default '30 seconds')
returns ai.stream_state
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  s ai.message_streams;
begin
  perform ai._check_stream_args(get_stream.thread_id, get_stream.stream_key);
  if stale_after is null or stale_after < interval '0' then
    raise exception using errcode = 'AS002',
      message = format('stale_after must be a non-negative interval, not %s', coalesce(stale_after::text, 'NULL'));
  end if;
  select * into s from ai.message_streams m
  where m.thread_id = get_stream.thread_id and m.stream_key = get_stream.stream_key;
  if not found then
    raise exception using errcode = 'AS001',
      message = format('stream %s of thread %s not found', get_stream.stream_key, get_stream.thread_id);
  end if;
  return ai._stream_state(s, stale_after);
end
$$;
comment on function ai.get_stream(text, text, interval) is
  'A stream''s state: status (open, finished, abandoned), last chunk, stale (open with no chunk for longer than stale_after: its writer looks dead), and the channel to LISTEN on. AS001 unknown stream, AS002 bad argument.';

create or replace function ai.read_stream(thread_id text, stream_key text, after_chunk integer default 0,
                               max_chunks integer default 1000)
returns table (chunk_no integer, content text, created_at timestamptz)
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  perform ai._check_stream_args(read_stream.thread_id, read_stream.stream_key);
  perform ai._check_limit(max_chunks, 'max_chunks');
  if after_chunk is null or after_chunk < 0 then
    raise exception using errcode = 'AS002',
      message = format('after_chunk must be 0 or more, not %s', coalesce(after_chunk::text, 'NULL'));
  end if;
  if not exists (select from ai.message_streams m
                 where m.thread_id = read_stream.thread_id and m.stream_key = read_stream.stream_key) then
    raise exception using errcode = 'AS001',
      message = format('stream %s of thread %s not found', read_stream.stream_key, read_stream.thread_id);
  end if;
  -- The batches that hold a chunk past after_chunk (the last one that starts at or before it,
  -- and every later one), unrolled into chunks.
  return query
    select (b.first_chunk + u.i - 1)::integer, u.c, b.created_at
    from ai.stream_batches b, pg_catalog.unnest(b.chunks) with ordinality as u(c, i)
    where b.thread_id = read_stream.thread_id and b.stream_key = read_stream.stream_key
      and b.first_chunk >= coalesce((select max(x.first_chunk) from ai.stream_batches x
                                     where x.thread_id = read_stream.thread_id and x.stream_key = read_stream.stream_key
                                       and x.first_chunk <= after_chunk + 1), 1)
      and b.first_chunk + u.i - 1 > after_chunk
    order by b.first_chunk, u.i
    limit max_chunks;
end
$$;
comment on function ai.read_stream(text, text, integer, integer) is
  'The chunks of a stream after after_chunk, in order, at most max_chunks (1 to 10000): a reader resumes from the last chunk it saw. AS001 unknown stream, AS002 bad argument.';

revoke execute on function ai._set_stream_durability(text), ai._stream_channel(text, text),
  ai._stream_state(ai.message_streams, interval), ai._check_stream_args(text, text),
  ai._lock_stream(text, text), ai.open_stream(text, text, text, integer, bigint, bigint, text),
  ai.append_stream_chunks(text, text, integer, text[], bigint, bigint, text), ai.finish_stream(text, text, bigint, bigint),
  ai.abandon_stream(text, text, bigint, bigint), ai.get_stream(text, text, interval),
  ai.read_stream(text, text, integer, integer) from public;
grant execute on function ai.open_stream(text, text, text, integer, bigint, bigint, text),
  ai.append_stream_chunks(text, text, integer, text[], bigint, bigint, text), ai.finish_stream(text, text, bigint, bigint),
  ai.abandon_stream(text, text, bigint, bigint), ai.get_stream(text, text, interval),
  ai.read_stream(text, text, integer, integer) to ai_user, ai_service;

-- 0.1.0's argument guard took the job and its token too; ai._fence holds that rule now.
drop function if exists ai._check_stream_args(text, text, bigint, bigint);

commit;
