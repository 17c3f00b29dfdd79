-- Deploy agent-state:streams to pg
-- requires: side_effects
-- requires: retention
--
-- Resumable streaming. An assistant message streams for seconds or minutes; it is persisted while
-- it streams, so a crash or a client disconnect loses no acknowledged chunk and anyone can resume
-- reading. A stream is keyed per thread by the caller's stream_key (opening it again returns it);
-- its chunks are numbered 1, 2, 3, ... by the writer. The rules:
--   - append_stream_chunks(first_chunk, chunks[]) stores chunks first_chunk.. in one round trip,
--     so a writer batches many tokens per commit. A chunk number already stored is a retry and is
--     skipped; a first_chunk past last_chunk + 1 is a gap (AS050); any chunk after the stream was
--     finished or abandoned is AS051.
--   - finish_stream assembles the chunks into one message through ai.append_message_idempotent,
--     with 'stream:' || stream_key as its idempotency key: exactly once, however often it is called.
--     Until then the stream is not a message, so context_window, compaction and get_messages see
--     only finished messages.
--   - abandon_stream closes it without a message (the chunks stay readable).
--   - A stream whose writer died is visible as stale (get_stream: open, no chunk for longer than
--     stale_after); the next worker finishes or abandons it.
--   - With job_id + fencing_token every write is fenced like any worker write (AS006).
-- Readers poll read_stream(after_chunk) and may LISTEN on the channel get_stream names: each
-- append sends pg_notify on it with an empty payload. The channel is a keyed hash of thread id and
-- stream key (ai._stream_channel), so only those who may see the stream learn it.
begin;

insert into ai.error_codes (sqlstate, name, description) values
  ('AS050', 'stream_gap', 'Stream chunks must follow the last stored chunk: a chunk number was skipped.'),
  ('AS051', 'stream_closed', 'The stream was finished or abandoned: it takes no more chunks, or cannot be finished after it was abandoned.');

create table ai.message_streams (
  thread_id text not null,
  stream_key text not null check (pg_catalog.char_length(stream_key) between 1 and 200),
  owner text not null,
  role text not null check (role in ('system', 'user', 'assistant', 'tool_call', 'tool_result')),
  turn integer,
  status text not null default 'open' check (status in ('open', 'finished', 'abandoned')),
  last_chunk integer not null default 0 check (last_chunk >= 0),
  total_bytes bigint not null default 0,
  job_id bigint,
  opened_at timestamptz not null default ai.now(),
  last_chunk_at timestamptz,
  closed_at timestamptz,
  message_seq bigint,
  primary key (thread_id, stream_key),
  foreign key (thread_id, owner) references ai.agent_sessions (thread_id, owner) on delete cascade
);
comment on table ai.message_streams is 'Messages being streamed: open until finished (assembled into one message) or abandoned.';

-- Chunks are stored as the batches that brought them: one row per append, holding chunks
-- first_chunk .. first_chunk + n - 1. A writer that batches 64 tokens writes one row, not 64.
create table ai.stream_batches (
  thread_id text not null,
  stream_key text not null,
  first_chunk integer not null check (first_chunk > 0),
  owner text not null,
  chunks text[] not null check (pg_catalog.cardinality(chunks) > 0),
  created_at timestamptz not null default ai.now(),
  primary key (thread_id, stream_key, first_chunk),
  foreign key (thread_id, stream_key) references ai.message_streams (thread_id, stream_key) on delete cascade,
  foreign key (thread_id, owner) references ai.agent_sessions (thread_id, owner) on delete cascade
);
comment on table ai.stream_batches is 'The chunks of each stream, as the batches that brought them: chunks first_chunk, first_chunk + 1, ... with no gap across batches.';

do $$
declare
  t text;
begin
  foreach t in array array['message_streams', 'stream_batches'] loop
    execute format('alter table ai.%I enable row level security', t);
    execute format('alter table ai.%I force row level security', t);
    execute format('create policy %I on ai.%I
                      using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
                      with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))',
                   t || '_by_owner', t);
    execute format('create table ai_archive.%I (like ai.%I including defaults including constraints including indexes,
                      foreign key (thread_id, owner) references ai_archive.agent_sessions (thread_id, owner) on delete cascade)',
                   t, t);
    execute format('alter table ai_archive.%I enable row level security', t);
    execute format('alter table ai_archive.%I force row level security', t);
    execute format('create policy %I on ai_archive.%I
                      using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
                      with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))',
                   t || '_by_owner', t);
    -- No grant: archive_sessions and restore_session (SECURITY DEFINER) move the rows.
  end loop;
end
$$;
-- No table privilege for any role: the functions (SECURITY DEFINER) are the only way in.
insert into ai._archived_tables (table_name, copy_order, order_by) values
  ('message_streams', 130, 'opened_at'),
  ('stream_batches', 140, 'first_chunk');

-- What get_stream returns: the stream and whether its writer looks dead.
create type ai.stream_state as (
  thread_id text, stream_key text, owner text, role text, turn integer, status text, last_chunk integer,
  total_bytes bigint, job_id bigint, opened_at timestamptz, last_chunk_at timestamptz, closed_at timestamptz,
  message_seq bigint, stale boolean, channel text
);
comment on type ai.stream_state is 'A stream, whether it is stale (open with no chunk for longer than stale_after), and its NOTIFY channel.';

commit;
