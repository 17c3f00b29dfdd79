-- Deploy agent-state:checkpoints_functions to pg
-- requires: checkpoints
-- requires: queue_functions
-- requires: sessions_functions
--
-- The functions and triggers of checkpoints (its tables, indexes and row rules:
-- deploy/checkpoints.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework checkpoints_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

drop function ai.put_checkpoint(text, text, text, text, text, bytea, jsonb, jsonb, ai.checkpoint_values, ai.task_writes, jsonb, ai.step_commit);
drop function ai._check_step(text, text, text, text, text, bytea, jsonb, jsonb, ai.checkpoint_values, ai.task_writes, text);
drop function ai._check_checkpoint_values(bytea, ai.checkpoint_values);
-- the step's records, once nothing takes them
drop type ai.step_commit;
drop type ai.task_writes;
drop type ai.checkpoint_values;
drop function ai._whole_values(text, text, text[], jsonb, bytea[]);
drop function ai._checkpoint_reads(text, text, text, text, jsonb, integer);
drop function ai._prune_thread(text, text);
drop function ai._rebuilt_value(text, text, text, text);
-- the bounded delta chains (issue 34 item 4)
drop function ai._insert_channel_values(text, text, text, text[], text[], text[], bytea[], text[], text);
-- the deltas that name a held write (issue 34 item 8)
drop function ai._unname_writes(text[], text[]);
drop function ai._append_step_messages(text, text, text, jsonb);
drop function ai._msgpack_is_array(bytea);
drop function ai._max_delta_depth();
drop function ai._insert_writes(text, text, text, text, text, text, integer[], text[], text[], bytea[]);
drop function ai._check_writes(text, text, integer[], text[], text[], bytea[]);
drop function ai._check_key(text, text, integer);
drop function ai._check_deletes_at_read_committed(text);
-- the bounded reads' signatures (max_rows and cursors) and the batched retention walk
drop function ai.list_checkpoints(text, text, text, integer, jsonb, text, text);
drop function ai._list_checkpoints_any(text, text, text, integer, jsonb, text, text);
drop function ai.checkpoint_lineage(text, text, text, text, integer);
drop function ai.checkpoints_between(text, timestamptz, timestamptz, integer, text, text);
drop function ai.prune_idle_threads(interval, text, integer, text);
drop procedure ai.prune_all_idle_threads(interval, text, integer, text);

-- A tombstone is what deletes a session: ai.delete_thread writes one for the caller's own thread
-- and this trigger then deletes that owner's session of that thread; the foreign keys cascade to
-- everything the thread owns (messages, events, checkpoints, values, writes). It runs inside the
-- schema owner's functions, under the same policies (a caller's own rows only).
create or replace function ai._delete_tombstoned_session() returns trigger
language plpgsql volatile
as $$
begin
  delete from ai.agent_sessions s where s.thread_id = new.thread_id and s.owner = new.owner;
  return null;
end
$$;
comment on function ai._delete_tombstoned_session() is 'Internal trigger: deletes the session a tombstone in ai.deleted_threads names (owner and thread must match).';
revoke execute on function ai._delete_tombstoned_session() from public;
create or replace trigger deleted_threads_delete_session
  after insert or update on ai.deleted_threads
  for each row execute function ai._delete_tombstoned_session();

-- ---------------------------------------------------------------------------------------------
-- Guards and helpers

create or replace function ai._check_checkpoint_ns(checkpoint_ns text) returns void
language plpgsql immutable parallel safe
as $$
begin
  if checkpoint_ns is null then
    raise exception using errcode = 'AS002', message = 'checkpoint_ns must not be NULL (the root namespace is '''')';
  end if;
  if pg_catalog.char_length(checkpoint_ns) > 1024 then
    raise exception using errcode = 'AS002', message = 'checkpoint_ns is longer than 1024 characters';
  end if;
end
$$;
comment on function ai._check_checkpoint_ns(text) is 'Internal guard: raises AS002 unless checkpoint_ns is a text of at most 1024 characters (empty is the root).';

-- Sizes: a checkpoint, each channel value and each pending write up to 16 MiB (AS003); channel
-- names and versions, which are index keys, up to 255 characters (AS002; longer ones would hit
-- the btree row limit, 54000). The hot paths test the common case inline and call this guard
-- only when something is over, to raise the error that names it.
create or replace function ai._check_blob_sizes(checkpoint bytea, channels text[], versions text[], blobs bytea[])
returns void
language plpgsql immutable
as $$
declare
  v_max constant integer := 16777216;
  u record;
begin
  if pg_catalog.octet_length(checkpoint) > v_max then
    raise exception using errcode = 'AS003',
      message = format('checkpoint is %s bytes, over the limit of %s', pg_catalog.octet_length(checkpoint), v_max);
  end if;
  for u in select * from unnest(channels, versions, blobs) as x(channel, version, blob) loop
    if pg_catalog.char_length(u.channel) > 255 then
      raise exception using errcode = 'AS002', message = 'a channel name is longer than 255 characters';
    end if;
    if pg_catalog.char_length(u.version) > 255 then
      raise exception using errcode = 'AS002',
        message = format('the version of channel %s is longer than 255 characters', u.channel);
    end if;
    if pg_catalog.octet_length(u.blob) > v_max then
      raise exception using errcode = 'AS003',
        message = format('the value of channel %s is %s bytes, over the limit of %s', u.channel, pg_catalog.octet_length(u.blob), v_max);
    end if;
  end loop;
end
$$;
comment on function ai._check_blob_sizes(bytea, text[], text[], bytea[]) is 'Internal guard: AS003 for a checkpoint or a value over 16 MiB, AS002 for a channel name or version over 255 characters.';

-- A fenced write: the queue's check that the caller still holds the job, in this transaction.
create or replace function ai._fence(job_id bigint, fencing_token bigint) returns void
language plpgsql volatile
as $$
begin
  if job_id is null and fencing_token is null then
    return;
  end if;
  if job_id is null or fencing_token is null then
    raise exception using errcode = 'AS002', message = 'job_id and fencing_token go together: give both or neither';
  end if;
  -- AS006 when the token is stale or the lease expired; checked again when this transaction
  -- commits, so a checkpoint of a job taken away meanwhile is not kept.
  perform ai.fenced_write(job_id, fencing_token);
end
$$;
comment on function ai._fence(bigint, bigint) is 'Internal: a no-op without job_id/fencing_token; else ai.fenced_write(job_id, fencing_token) (AS006 when stale, AS001 unknown job).';

-- The owner of a thread that a checkpoint write goes to. An unknown thread is created for the
-- caller (LangGraph users never call create_session), unless the caller deleted it (AS020).
-- Another tenant's thread is AS001, as anywhere else.
create or replace function ai._checkpoint_thread_owner(thread_id text) returns text
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  v_owner text;
begin
  select owner into v_owner from ai.agent_sessions s where s.thread_id = a_thread_id;
  if found then
    return v_owner;
  end if;
  -- RLS shows a tenant its own tombstones, a service acting for no one all of them
  if exists (select from ai.deleted_threads d where d.thread_id = a_thread_id) then
    raise exception using errcode = 'AS020',
      message = format('thread %s was deleted', a_thread_id),
      hint = 'a deleted thread is not re-created by a late write; use a new thread_id';
  end if;
  -- New, or created meanwhile by the caller in a concurrent transaction (LangGraph's background
  -- put racing its put_writes): either way the caller's row. NULL: another tenant's thread.
  if ai._start_session(a_thread_id, ai.current_owner(), '{}',
                       pg_catalog.jsonb_build_object('config', '{}'::jsonb, 'by', 'checkpoint')) then
    return ai.current_owner();
  end if;
  select owner into v_owner from ai.agent_sessions s where s.thread_id = a_thread_id;
  if not found then
    raise exception using errcode = 'AS001', message = format('thread %s not found', a_thread_id);
  end if;
  return v_owner;
end
$$;
comment on function ai._checkpoint_thread_owner(text) is 'Internal: the owner of the thread a checkpoint goes to, creating the session for the caller when the thread is new. AS001 another tenant''s thread, AS020 a thread the caller deleted.';

-- Blobs no remaining checkpoint of their (thread, namespace) references, for the given threads.
create or replace function ai._collect_checkpoint_blobs(thread_ids text[]) returns bigint
language plpgsql volatile
as $$
declare
  v_count bigint;
begin
  with referenced as materialized (
    select c.thread_id, c.checkpoint_ns, v.key as channel, v.value as version
    from ai.checkpoints c
    cross join lateral pg_catalog.jsonb_each_text(c.channel_versions) v
    where c.thread_id = any (thread_ids)
  )
  delete from ai.checkpoint_blobs b
  where b.thread_id = any (thread_ids)
    and not exists (select from referenced r
                    where r.thread_id = b.thread_id and r.checkpoint_ns = b.checkpoint_ns
                      and r.channel = b.channel and r.version = b.version);
  get diagnostics v_count = row_count;
  return v_count;
end
$$;
comment on function ai._collect_checkpoint_blobs(text[]) is 'Internal: deletes the channel values no checkpoint of their thread and namespace references any more; returns how many.';

-- current_checkpoint_id after checkpoints were deleted: the newest remaining root checkpoint.
create or replace function ai._reset_current_checkpoint(thread_ids text[]) returns void
language sql volatile
as $$
  update ai.agent_sessions s
  set current_checkpoint_id = (select max(c.checkpoint_id) from ai.checkpoints c
                               where c.thread_id = s.thread_id and c.checkpoint_ns = '')
  where s.thread_id = any (thread_ids)
$$;
comment on function ai._reset_current_checkpoint(text[]) is 'Internal: points current_checkpoint_id of the given sessions at their newest remaining root-namespace checkpoint.';

-- ---------------------------------------------------------------------------------------------
-- Writing

create or replace function ai.put_checkpoint(
  thread_id text,
  checkpoint_ns text,
  checkpoint_id text,
  parent_checkpoint_id text,
  type text,
  checkpoint bytea,
  metadata jsonb default '{}',
  channel_versions jsonb default '{}',
  blob_channels text[] default '{}',
  blob_versions text[] default '{}',
  blob_types text[] default '{}',
  blobs bytea[] default '{}',
  job_id bigint default null,
  fencing_token bigint default null,
  durability text default 'sync'
) returns text
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_ns alias for $2;
  a_parent_id alias for $4;
  a_type alias for $5;
  a_checkpoint alias for $6;
  a_metadata alias for $7;
  a_versions alias for $8;
  a_blob_channels alias for $9;
  a_blob_versions alias for $10;
  a_blob_types alias for $11;
  a_blobs alias for $12;
  a_durability alias for $15;
  v_id text := coalesce($3, ai.ulid());
  v_now timestamptz := ai.now();
  v_owner text;
begin
  -- Guards. The common case is tested inline (plain expressions, no query: this is the hot path
  -- of every graph step); a failing argument goes to the shared guard, which raises its error.
  if a_thread_id is null or a_thread_id = '' or pg_catalog.char_length(a_thread_id) > 255 then
    perform ai._check_thread_id(a_thread_id);
  end if;
  if a_ns is null or pg_catalog.char_length(a_ns) > 1024 then
    perform ai._check_checkpoint_ns(a_ns);
  end if;
  if v_id = '' or pg_catalog.char_length(v_id) > 255 then
    perform ai._check_text(v_id, 'checkpoint_id');
  end if;
  if a_parent_id = '' or pg_catalog.char_length(a_parent_id) > 255 then
    perform ai._check_text(a_parent_id, 'parent_checkpoint_id');
  end if;
  if a_type is null or a_type = '' or pg_catalog.char_length(a_type) > 64 then
    perform ai._check_text(a_type, 'type', 64);
  end if;
  if a_checkpoint is null then
    raise exception using errcode = 'AS002', message = 'checkpoint must not be NULL';
  end if;
  if a_metadata is null or pg_catalog.jsonb_typeof(a_metadata) <> 'object'
     or pg_catalog.pg_column_size(a_metadata) > ai._max_document_bytes() then
    perform ai._check_document(a_metadata, 'metadata', must_be_object => true);
  end if;
  if a_versions is null or pg_catalog.jsonb_typeof(a_versions) <> 'object'
     or pg_catalog.pg_column_size(a_versions) > ai._max_document_bytes() then
    perform ai._check_document(a_versions, 'channel_versions', must_be_object => true);
  end if;
  if a_blob_channels is null or a_blob_versions is null or a_blob_types is null or a_blobs is null then
    raise exception using errcode = 'AS002', message = 'blob arrays must not be NULL (pass empty arrays)';
  end if;
  if pg_catalog.cardinality(a_blob_channels) <> pg_catalog.cardinality(a_blobs)
     or pg_catalog.cardinality(a_blob_versions) <> pg_catalog.cardinality(a_blobs)
     or pg_catalog.cardinality(a_blob_types) <> pg_catalog.cardinality(a_blobs) then
    raise exception using errcode = 'AS002',
      message = 'blob_channels, blob_versions, blob_types and blobs must have the same length';
  end if;
  if array_position(a_blob_channels, null) is not null or array_position(a_blob_versions, null) is not null
     or array_position(a_blob_types, null) is not null then
    raise exception using errcode = 'AS002', message = 'blob channels, versions and types must not contain NULL';
  end if;
  if pg_catalog.octet_length(a_checkpoint) > 16777216
     or exists (select from unnest(a_blob_channels, a_blob_versions, a_blobs) as u(channel, version, blob)
                where pg_catalog.char_length(u.channel) > 255 or pg_catalog.char_length(u.version) > 255
                   or pg_catalog.octet_length(u.blob) > 16777216) then
    perform ai._check_blob_sizes(a_checkpoint, a_blob_channels, a_blob_versions, a_blobs);
  end if;
  if a_durability is null or a_durability not in ('sync', 'async') then
    raise exception using errcode = 'AS002',
      message = format('durability %s is not sync or async', coalesce(pg_catalog.quote_literal(a_durability), 'NULL'));
  end if;
  if job_id is not null or fencing_token is not null then
    perform ai._fence(job_id, fencing_token);
  end if;

  if a_durability = 'async' then
    -- This transaction only: a crash may lose it whole, never half of it.
    perform pg_catalog.set_config('synchronous_commit', 'off', true);
  end if;

  -- The session row first (lock order: session, then checkpoint rows; see the header).
  if a_ns = '' then
    update ai.agent_sessions s
    set current_checkpoint_id = case when s.current_checkpoint_id is null
                                       or s.current_checkpoint_id collate "C" < v_id
                                     then v_id else s.current_checkpoint_id end
    where s.thread_id = a_thread_id
    returning s.owner into v_owner;
  else
    select s.owner into v_owner from ai.agent_sessions s where s.thread_id = a_thread_id;
  end if;
  if v_owner is null then
    v_owner := ai._checkpoint_thread_owner(a_thread_id);
    if a_ns = '' then
      update ai.agent_sessions s set current_checkpoint_id = v_id where s.thread_id = a_thread_id;
    end if;
  end if;

  -- One statement for the values and the checkpoint.
  with new_values as (
    insert into ai.checkpoint_blobs (thread_id, checkpoint_ns, channel, version, owner, type, blob)
    select a_thread_id, a_ns, u.channel, u.version, v_owner, u.type, u.blob
    from unnest(a_blob_channels, a_blob_versions, a_blob_types, a_blobs) as u(channel, version, type, blob)
    on conflict (thread_id, checkpoint_ns, channel, version) do nothing
  )
  insert into ai.checkpoints (thread_id, checkpoint_ns, checkpoint_id, owner, parent_checkpoint_id, type,
                              checkpoint, metadata, channel_versions, created_at)
  values (a_thread_id, a_ns, v_id, v_owner, a_parent_id, a_type, a_checkpoint, a_metadata, a_versions, v_now)
  on conflict (thread_id, checkpoint_ns, checkpoint_id) do update
  set parent_checkpoint_id = excluded.parent_checkpoint_id,
      type = excluded.type,
      checkpoint = excluded.checkpoint,
      metadata = excluded.metadata,
      channel_versions = excluded.channel_versions;
  return v_id;
end
$$;
comment on function ai.put_checkpoint(text, text, text, text, text, bytea, jsonb, jsonb, text[], text[], text[], bytea[], bigint, bigint, text) is
  'Saves a checkpoint and its new channel values (parallel arrays blob_channels/versions/types/blobs, each stored once per version) in one call; returns its id (a new ULID when checkpoint_id is NULL). Putting the same id again replaces it. Creates the session for the caller when the thread is new; in the root namespace keeps agent_sessions.current_checkpoint_id at the newest id. job_id + fencing_token make it a fenced write (ai.fenced_write); durability ''async'' commits this transaction with synchronous_commit off. AS001 another tenant''s thread, AS002 bad argument (a channel name or version over 255 characters too), AS003 metadata over 1 MiB or the checkpoint or a channel value over 16 MiB, AS006 stale fencing token, AS020 deleted thread.';

create or replace function ai.put_writes(
  thread_id text,
  checkpoint_ns text,
  checkpoint_id text,
  task_id text,
  idx integer[],
  channels text[],
  types text[],
  blobs bytea[],
  task_path text default '',
  job_id bigint default null,
  fencing_token bigint default null
) returns integer
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_ns alias for $2;
  a_checkpoint_id alias for $3;
  a_task_id alias for $4;
  a_idx alias for $5;
  a_channels alias for $6;
  a_types alias for $7;
  a_blobs alias for $8;
  a_task_path alias for $9;
  v_owner text;
  v_count integer;
begin
  -- Guards: inline for the common case, the shared guard raises (see put_checkpoint).
  if a_thread_id is null or a_thread_id = '' or pg_catalog.char_length(a_thread_id) > 255 then
    perform ai._check_thread_id(a_thread_id);
  end if;
  if a_ns is null or pg_catalog.char_length(a_ns) > 1024 then
    perform ai._check_checkpoint_ns(a_ns);
  end if;
  if a_checkpoint_id is null or a_checkpoint_id = '' or pg_catalog.char_length(a_checkpoint_id) > 255 then
    perform ai._check_text(a_checkpoint_id, 'checkpoint_id');
  end if;
  if a_task_id is null or a_task_id = '' or pg_catalog.char_length(a_task_id) > 255 then
    perform ai._check_text(a_task_id, 'task_id');
  end if;
  if a_task_path is null then
    raise exception using errcode = 'AS002', message = 'task_path must not be NULL (pass an empty string)';
  end if;
  if a_idx is null or a_channels is null or a_types is null or a_blobs is null then
    raise exception using errcode = 'AS002', message = 'idx, channels, types and blobs must not be NULL';
  end if;
  if pg_catalog.cardinality(a_idx) <> pg_catalog.cardinality(a_blobs)
     or pg_catalog.cardinality(a_channels) <> pg_catalog.cardinality(a_blobs)
     or pg_catalog.cardinality(a_types) <> pg_catalog.cardinality(a_blobs) then
    raise exception using errcode = 'AS002', message = 'idx, channels, types and blobs must have the same length';
  end if;
  if array_position(a_idx, null) is not null or array_position(a_channels, null) is not null
     or array_position(a_types, null) is not null or array_position(a_blobs, null) is not null then
    raise exception using errcode = 'AS002', message = 'idx, channels, types and blobs must not contain NULL';
  end if;
  if exists (select from unnest(a_channels, a_blobs) as u(channel, blob)
             where pg_catalog.char_length(u.channel) > 255 or pg_catalog.octet_length(u.blob) > 16777216) then
    perform ai._check_blob_sizes(null, a_channels, null, a_blobs);
  end if;
  if job_id is not null or fencing_token is not null then
    perform ai._fence(job_id, fencing_token);
  end if;

  select s.owner into v_owner from ai.agent_sessions s where s.thread_id = a_thread_id;
  if not found then
    v_owner := ai._checkpoint_thread_owner(a_thread_id);
  end if;
  -- A retried task writes the same (task_id, idx) again: kept as first written, except the
  -- special channels (negative idx: error, interrupt, resume, ...), where the newest wins. The same
  -- rule inside one call, as LangGraph's savers apply it write by write (a node that calls
  -- interrupt() twice sends two __resume__ writes at once): the last of a negative idx, the first
  -- of any other. One row per key also keeps ON CONFLICT DO UPDATE from meeting a row twice.
  insert into ai.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, owner, channel,
                                    type, blob, task_path)
  select distinct on (u.idx)
         a_thread_id, a_ns, a_checkpoint_id, a_task_id, u.idx, v_owner, u.channel, u.type, u.blob, a_task_path
  from unnest(a_idx, a_channels, a_types, a_blobs) with ordinality as u(idx, channel, type, blob, ord)
  order by u.idx, case when u.idx < 0 then -u.ord else u.ord end
  on conflict (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) do update
  set channel = excluded.channel, type = excluded.type, blob = excluded.blob, task_path = excluded.task_path
  where ai.checkpoint_writes.idx < 0;
  get diagnostics v_count = row_count;
  return v_count;
end
$$;
comment on function ai.put_writes(text, text, text, text, integer[], text[], text[], bytea[], text, bigint, bigint) is
  'Stores the pending writes of one task run from a checkpoint (parallel arrays idx/channels/types/blobs); idempotent per (task_id, idx): a repeat changes nothing, except for negative idx (special channels), which it overwrites; within one call, the last write of a negative idx and the first of any other idx count. Returns the rows written. The checkpoint need not exist yet (writes may commit before it). AS001 another tenant''s thread, AS002 bad argument (a channel name over 255 characters too), AS003 a value over 16 MiB, AS006 stale fencing token, AS020 deleted thread.';

-- The values and pending writes of one checkpoint row, for get_checkpoint and list_checkpoints.
-- A set-returning SQL function of one SELECT: inlined into the caller's query and planned with it.
-- Values: one primary-key probe per channel (LATERAL ... LIMIT 1), whatever the statistics say
-- (a join could scan every value of a long thread). Writes: in (task_path, task_id, idx) order.
create or replace function ai._checkpoint_tuple(c ai.checkpoints) returns setof ai.checkpoint_tuple
language sql stable rows 1
as $$
  select c.thread_id, c.checkpoint_ns::text, c.checkpoint_id::text, c.parent_checkpoint_id::text, c.type,
         c.checkpoint, c.metadata, c.channel_versions, c.created_at,
         bl.channels, bl.types, bl.blobs,
         w.task_ids, w.task_paths, w.idxs, w.channels, w.types, w.blobs
  from (
    select array_agg(b.channel::text) as channels, array_agg(b.type) as types, array_agg(b.blob) as blobs
    from pg_catalog.jsonb_each_text(c.channel_versions) v
    cross join lateral (
      select b.channel, b.type, b.blob from ai.checkpoint_blobs b
      where b.thread_id = c.thread_id and b.checkpoint_ns = c.checkpoint_ns and b.channel = v.key and b.version = v.value
      limit 1
    ) b
  ) bl
  cross join (
    select array_agg(x.task_id::text order by x.task_path, x.task_id, x.idx) as task_ids,
           array_agg(x.task_path::text order by x.task_path, x.task_id, x.idx) as task_paths,
           array_agg(x.idx order by x.task_path, x.task_id, x.idx) as idxs,
           array_agg(x.channel order by x.task_path, x.task_id, x.idx) as channels,
           array_agg(x.type order by x.task_path, x.task_id, x.idx) as types,
           array_agg(x.blob order by x.task_path, x.task_id, x.idx) as blobs
    from ai.checkpoint_writes x
    where x.thread_id = c.thread_id and x.checkpoint_ns = c.checkpoint_ns and x.checkpoint_id = c.checkpoint_id
  ) w
$$;
comment on function ai._checkpoint_tuple(ai.checkpoints) is 'Internal: one checkpoint row with its channel values and pending writes, as ai.checkpoint_tuple.';

-- Reads by key only: one backward probe (or range) of a thread's checkpoints, one primary-key
-- probe per channel value, one range of pending writes. get_checkpoint, list_checkpoints and
-- _list_checkpoints_any run with enable_seqscan = off, so the probes stay probes whatever the
-- statistics say: their plans are generic (one plan for every call), priced from the tables'
-- statistics alone, and those can be badly skewed. After one thread staged thousands of pending
-- writes on one checkpoint (a fan-out step), ANALYZE saw one (thread, checkpoint) for all of
-- ai.checkpoint_writes, the planner expected every probe to return the whole table, and every
-- get_checkpoint of every thread read all of it sequentially (15 ms instead of 1 ms; found by
-- bench/checkpoints.sh). (A scan with no usable key, such as listing every thread without a
-- filter, still runs: enable_seqscan = off only makes it expensive to the planner.)
create or replace function ai.get_checkpoint(thread_id text, checkpoint_ns text default '', checkpoint_id text default null)
returns setof ai.checkpoint_tuple
language plpgsql stable
-- one plan for every call: the query below has no shape that depends on the arguments
set plan_cache_mode = force_generic_plan
security definer
set search_path = pg_catalog, pg_temp
set enable_seqscan = off
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_ns alias for $2;
  a_checkpoint_id alias for $3;
  -- the newest id <= this bound: the given id, or (NULL) above any id
  v_bound text := coalesce(a_checkpoint_id, pg_catalog.chr(1114111));
begin
  if a_thread_id is null or a_thread_id = '' or pg_catalog.char_length(a_thread_id) > 255 then
    perform ai._check_thread_id(a_thread_id);
  end if;
  if a_ns is null or pg_catalog.char_length(a_ns) > 1024 then
    perform ai._check_checkpoint_ns(a_ns);
  end if;
  -- one backward probe of the primary key (ordered by it, so no other index competes)
  return query
  select t.*
  from (select * from ai.checkpoints c
        where c.thread_id = a_thread_id and c.checkpoint_ns = a_ns and c.checkpoint_id <= v_bound
        order by c.checkpoint_id desc
        limit 1) c
  cross join lateral ai._checkpoint_tuple(c) t
  where a_checkpoint_id is null or c.checkpoint_id = a_checkpoint_id;
end
$$;
comment on function ai.get_checkpoint(text, text, text) is
  'One checkpoint with its channel values and pending writes, in one call: the given id, or the newest of the namespace when checkpoint_id is NULL. No row when there is none (or the thread is another tenant''s). AS002 bad argument.';

-- The general case of list_checkpoints (no thread, or no namespace): planned for the arguments
-- of each call, so the NULL branches fold away and the right index is used.
create or replace function ai._list_checkpoints_any(thread_id text, checkpoint_ns text, before text, max_rows integer,
                                         metadata_filter jsonb)
returns setof ai.checkpoint_tuple
language plpgsql stable
set plan_cache_mode = force_custom_plan
set enable_seqscan = off  -- key probes whatever the statistics (see get_checkpoint)
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_ns alias for $2;
  a_before alias for $3;
  a_max_rows alias for $4;
  a_filter alias for $5;
begin
  return query
  select t.*
  from (select * from ai.checkpoints c
        where (a_thread_id is null or c.thread_id = a_thread_id)
          and (a_ns is null or c.checkpoint_ns = a_ns)
          and (a_before is null or c.checkpoint_id < a_before)
          and (a_filter is null or c.metadata @> a_filter)
        order by c.checkpoint_id desc
        limit a_max_rows) c
  cross join lateral ai._checkpoint_tuple(c) t
  order by t.checkpoint_id desc;
end
$$;
comment on function ai._list_checkpoints_any(text, text, text, integer, jsonb) is 'Internal: list_checkpoints across threads or namespaces, planned per call.';

create or replace function ai.list_checkpoints(
  thread_id text,
  checkpoint_ns text default null,
  before text default null,
  max_rows integer default null,
  metadata_filter jsonb default null
) returns setof ai.checkpoint_tuple
language plpgsql stable
-- the common case (one thread, one namespace) has one plan for every call
set plan_cache_mode = force_generic_plan
security definer
set search_path = pg_catalog, pg_temp
set enable_seqscan = off  -- key probes whatever the statistics (see get_checkpoint)
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_ns alias for $2;
  a_before alias for $3;
  a_max_rows alias for $4;
  a_filter alias for $5;
  v_before text := coalesce(a_before, pg_catalog.chr(1114111));
begin
  if a_thread_id is not null then
    perform ai._check_thread_id(a_thread_id);
  end if;
  if a_ns is not null then
    perform ai._check_checkpoint_ns(a_ns);
  end if;
  if a_max_rows is not null and a_max_rows < 0 then
    raise exception using errcode = 'AS002', message = format('max_rows must not be negative, not %s', a_max_rows);
  end if;
  if a_filter is not null then
    perform ai._check_document(a_filter, 'metadata_filter', must_be_object => true);
  end if;
  if a_thread_id is null or a_ns is null then
    return query select * from ai._list_checkpoints_any(a_thread_id, a_ns, a_before, a_max_rows, a_filter);
    return;
  end if;
  -- one thread, one namespace: a backward range scan of the primary key, newest first
  return query
  select t.*
  from (select * from ai.checkpoints c
        where c.thread_id = a_thread_id and c.checkpoint_ns = a_ns and c.checkpoint_id < v_before
          and (a_filter is null or c.metadata @> a_filter)
        order by c.checkpoint_id desc
        limit a_max_rows) c
  cross join lateral ai._checkpoint_tuple(c) t
  order by t.checkpoint_id desc;
end
$$;
comment on function ai.list_checkpoints(text, text, text, integer, jsonb) is
  'Checkpoints newest first, each with its channel values and pending writes: of one thread (NULL: every thread the caller sees), one namespace (NULL: all), ids before `before`, whose metadata contains metadata_filter (GIN index), at most max_rows (NULL: all). AS002 bad argument, AS003 filter too large.';

-- The parent chain. Ids sort in time order and a parent is older than its child, so the
-- ancestors of X are found in ONE backward range scan of the thread's ids <= X, following the
-- parent pointer as rows stream by: linear in the rows read, however deep the chain. Rows of
-- other branches are skipped. Should a parent not be older than its child (ids brought by a
-- caller in no time order), the walk finishes with one primary-key probe per step.
create or replace function ai.checkpoint_lineage(
  thread_id text,
  checkpoint_id text,
  checkpoint_ns text default '',
  direction text default 'ancestors'
) returns setof ai.lineage_step
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_checkpoint_id alias for $2;
  a_ns alias for $3;
  a_direction alias for $4;
  v_want text := a_checkpoint_id;
  step ai.lineage_step;
  v_depth integer := 0;
  r record;
begin
  perform ai._check_thread_id(a_thread_id);
  perform ai._check_text(a_checkpoint_id, 'checkpoint_id');
  perform ai._check_checkpoint_ns(a_ns);
  if a_direction is null or a_direction not in ('ancestors', 'descendants') then
    raise exception using errcode = 'AS002',
      message = format('direction %s is not ancestors or descendants', coalesce(pg_catalog.quote_literal(a_direction), 'NULL'));
  end if;
  if not exists (select from ai.checkpoints c
                 where c.thread_id = a_thread_id and c.checkpoint_ns = a_ns and c.checkpoint_id = a_checkpoint_id) then
    raise exception using errcode = 'AS001',
      message = format('checkpoint %s of thread %s not found', a_checkpoint_id, a_thread_id);
  end if;

  if a_direction = 'descendants' then
    -- Forward through every branch: children by the (thread, ns, parent) index.
    return query
    with recursive down as (
      select c.checkpoint_id, c.parent_checkpoint_id, 0 as depth, c.created_at, c.metadata
      from ai.checkpoints c
      where c.thread_id = a_thread_id and c.checkpoint_ns = a_ns and c.checkpoint_id = a_checkpoint_id
      union all
      select c.checkpoint_id, c.parent_checkpoint_id, d.depth + 1, c.created_at, c.metadata
      from down d
      join ai.checkpoints c
        on c.thread_id = a_thread_id and c.checkpoint_ns = a_ns and c.parent_checkpoint_id = d.checkpoint_id
    )
    select d.checkpoint_id::text, d.parent_checkpoint_id::text, d.depth, d.created_at, d.metadata
    from down d
    order by d.depth, d.checkpoint_id;
    return;
  end if;

  for r in
    select c.checkpoint_id, c.parent_checkpoint_id, c.created_at, c.metadata
    from ai.checkpoints c
    where c.thread_id = a_thread_id and c.checkpoint_ns = a_ns and c.checkpoint_id <= a_checkpoint_id
    order by c.checkpoint_id desc
  loop
    if r.checkpoint_id = v_want then
      step := (r.checkpoint_id, r.parent_checkpoint_id, v_depth, r.created_at, r.metadata)::ai.lineage_step;
      return next step;
      v_depth := v_depth + 1;
      v_want := r.parent_checkpoint_id;
      exit when v_want is null;
    end if;
  end loop;
  -- A parent newer than its child, or one that was pruned: follow the pointers one by one.
  while v_want is not null loop
    select c.checkpoint_id, c.parent_checkpoint_id, c.created_at, c.metadata into r
    from ai.checkpoints c
    where c.thread_id = a_thread_id and c.checkpoint_ns = a_ns and c.checkpoint_id = v_want;
    exit when not found;
    step := (r.checkpoint_id, r.parent_checkpoint_id, v_depth, r.created_at, r.metadata)::ai.lineage_step;
    return next step;
    v_depth := v_depth + 1;
    v_want := r.parent_checkpoint_id;
  end loop;
end
$$;
comment on function ai.checkpoint_lineage(text, text, text, text) is
  'The checkpoints (checkpoint_id, parent_checkpoint_id, depth, created_at, metadata) along the parent chain of one checkpoint: ''ancestors'' (default) from the checkpoint itself (depth 0) back to the root, in one index range scan; ''descendants'' forward through every branch (depth = distance). Stays in one namespace. AS001 unknown checkpoint (or another tenant''s), AS002 bad argument.';

create or replace function ai.checkpoints_between(thread_id text, from_time timestamptz, to_time timestamptz)
returns table (checkpoint_ns text, checkpoint_id text, parent_checkpoint_id text, created_at timestamptz, metadata jsonb)
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_from alias for $2;
  a_to alias for $3;
begin
  perform ai._check_thread_id(a_thread_id);
  if a_from is null or a_to is null then
    raise exception using errcode = 'AS002', message = 'from_time and to_time must not be NULL';
  end if;
  if a_from > a_to then
    raise exception using errcode = 'AS002', message = format('from_time %s is after to_time %s', a_from, a_to);
  end if;
  return query
  select c.checkpoint_ns::text, c.checkpoint_id::text, c.parent_checkpoint_id::text, c.created_at, c.metadata
  from ai.checkpoints c
  where c.thread_id = a_thread_id and c.created_at >= a_from and c.created_at < a_to
  order by c.created_at, c.checkpoint_ns, c.checkpoint_id;
end
$$;
comment on function ai.checkpoints_between(text, timestamptz, timestamptz) is
  'The checkpoints of a thread (all namespaces) saved in [from_time, to_time), oldest first: one range scan of the (thread_id, created_at) index. AS002 bad argument.';

-- ---------------------------------------------------------------------------------------------
-- DeltaChannel history (LangGraph 1.2, beta). A DeltaChannel stores its value only every so many
-- steps (a snapshot: a channel value like any other); in between it stores nothing and its value
-- is rebuilt from the pending writes of the ancestors back to the nearest stored value (the seed).
-- ai._delta_walk is that walk, shared by ai.delta_channel_history (which reads it) and
-- ai.prune_checkpoints (which must keep it).
--
-- The walk is checkpoint_lineage's: one backward range scan of the thread's ids, following the
-- parent pointer as rows stream by, from the target's parent (the target's own writes are pending
-- for the next step, not part of its value). For each channel still looking, an ancestor ends the
-- walk when it holds a value for the channel:
--   'blob'       a row of ai.checkpoint_blobs for the version the ancestor names;
--   'checkpoint' no such row, yet the ancestor names a version and its metadata does not count the
--                channel as a delta channel since a snapshot (counters_since_delta_snapshot): a
--                value written before the channel became a DeltaChannel, kept inline in the
--                checkpoint bytes (small primitives) or absent; the client reads the checkpoint.
-- Rows: each ancestor on a channel's path (depth 1 = the target's parent), the channel, and on the
-- ancestor that ends it, how (seed_kind) and the version. No row when the target is unknown (or
-- another tenant's: RLS), or a channel has no ancestor.
create or replace function ai._delta_walk(thread_id text, checkpoint_ns text, checkpoint_id text, channels text[])
returns table (depth integer, ancestor_id text, channel text, seed_kind text, seed_version text)
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_ns alias for $2;
  a_checkpoint_id alias for $3;
  v_channels text[];
  v_last text[];     -- per channel: the version last probed (an unchanged version needs no probe)
  v_done boolean[];
  v_left integer;
  v_want text;
  v_depth integer := 0;
  v_version text;
  v_kind text;
  r record;
begin
  select array_agg(distinct c) into v_channels from pg_catalog.unnest(channels) c where c is not null;
  if v_channels is null then
    return;
  end if;
  v_left := pg_catalog.cardinality(v_channels);
  v_last := pg_catalog.array_fill(null::text, array[v_left]);
  v_done := pg_catalog.array_fill(false, array[v_left]);
  select c.parent_checkpoint_id into v_want
  from ai.checkpoints c
  where c.thread_id = a_thread_id and c.checkpoint_ns = a_ns and c.checkpoint_id = a_checkpoint_id;
  if v_want is null then
    return;  -- unknown target, or a root: nothing before it
  end if;

  -- One backward range scan; a parent not older than its child is followed by probes below.
  for r in
    select c.checkpoint_id, c.parent_checkpoint_id, c.channel_versions, c.metadata
    from ai.checkpoints c
    where c.thread_id = a_thread_id and c.checkpoint_ns = a_ns and c.checkpoint_id <= v_want
    order by c.checkpoint_id desc
  loop
    continue when r.checkpoint_id <> v_want;
    v_depth := v_depth + 1;
    for i in 1 .. pg_catalog.cardinality(v_channels) loop
      continue when v_done[i];
      v_kind := null;
      v_version := r.channel_versions ->> v_channels[i];
      if v_version is not null and v_version is distinct from v_last[i] then
        v_last[i] := v_version;
        if exists (select from ai.checkpoint_blobs b
                   where b.thread_id = a_thread_id and b.checkpoint_ns = a_ns
                     and b.channel = v_channels[i] and b.version = v_version) then
          v_kind := 'blob';
        elsif not coalesce(r.metadata -> 'counters_since_delta_snapshot' ? v_channels[i], false) then
          v_kind := 'checkpoint';
        end if;
      end if;
      depth := v_depth;
      ancestor_id := r.checkpoint_id;
      channel := v_channels[i];
      seed_kind := v_kind;
      seed_version := case when v_kind is not null then v_version end;
      return next;
      if v_kind is not null then
        v_done[i] := true;
        v_left := v_left - 1;
      end if;
    end loop;
    v_want := r.parent_checkpoint_id;
    exit when v_want is null or v_left = 0;
  end loop;

  -- A parent newer than its child (ids in no time order): one primary-key probe per step.
  while v_want is not null and v_left > 0 loop
    select c.checkpoint_id, c.parent_checkpoint_id, c.channel_versions, c.metadata into r
    from ai.checkpoints c
    where c.thread_id = a_thread_id and c.checkpoint_ns = a_ns and c.checkpoint_id = v_want;
    exit when not found;
    v_depth := v_depth + 1;
    for i in 1 .. pg_catalog.cardinality(v_channels) loop
      continue when v_done[i];
      v_kind := null;
      v_version := r.channel_versions ->> v_channels[i];
      if v_version is not null and v_version is distinct from v_last[i] then
        v_last[i] := v_version;
        if exists (select from ai.checkpoint_blobs b
                   where b.thread_id = a_thread_id and b.checkpoint_ns = a_ns
                     and b.channel = v_channels[i] and b.version = v_version) then
          v_kind := 'blob';
        elsif not coalesce(r.metadata -> 'counters_since_delta_snapshot' ? v_channels[i], false) then
          v_kind := 'checkpoint';
        end if;
      end if;
      depth := v_depth;
      ancestor_id := r.checkpoint_id;
      channel := v_channels[i];
      seed_kind := v_kind;
      seed_version := case when v_kind is not null then v_version end;
      return next;
      if v_kind is not null then
        v_done[i] := true;
        v_left := v_left - 1;
      end if;
    end loop;
    v_want := r.parent_checkpoint_id;
  end loop;
end
$$;
comment on function ai._delta_walk(text, text, text, text[]) is
  'Internal: the ancestors a DeltaChannel''s value at a checkpoint is rebuilt from, per channel: from the parent (depth 1) back to the nearest ancestor holding a value (seed_kind ''blob'': a channel value row; ''checkpoint'': possibly inline in the checkpoint bytes), or to the root.';

create or replace function ai.delta_channel_history(thread_id text, checkpoint_ns text, checkpoint_id text, channels text[])
returns table (channel text, kind text, from_checkpoint_id text, task_id text, idx integer, type text, blob bytea)
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_ns alias for $2;
  a_channels alias for $4;
  v_id text := $3;
begin
  if a_thread_id is null or a_thread_id = '' or pg_catalog.char_length(a_thread_id) > 255 then
    perform ai._check_thread_id(a_thread_id);
  end if;
  if a_ns is null or pg_catalog.char_length(a_ns) > 1024 then
    perform ai._check_checkpoint_ns(a_ns);
  end if;
  if v_id = '' or pg_catalog.char_length(v_id) > 255 then
    perform ai._check_text(v_id, 'checkpoint_id');
  end if;
  if a_channels is null or pg_catalog.array_position(a_channels, null) is not null then
    raise exception using errcode = 'AS002', message = 'channels must not be NULL or contain NULL';
  end if;
  if v_id is null then
    select c.checkpoint_id into v_id
    from ai.checkpoints c
    where c.thread_id = a_thread_id and c.checkpoint_ns = a_ns
    order by c.checkpoint_id desc
    limit 1;
  end if;
  return query
  with walk as materialized (
    select * from ai._delta_walk(a_thread_id, a_ns, v_id, a_channels)
  )
  select s.channel, s.kind, s.from_checkpoint_id, s.task_id, s.idx, s.type, s.blob
  from (
    -- the seed first: a channel value row ...
    select w.channel, 'seed' as kind, w.ancestor_id as from_checkpoint_id, null::text as task_id, null::integer as idx,
           b.type, b.blob, 0 as part, 0 as depth, ''::text as task_path
    from walk w
    join ai.checkpoint_blobs b
      on b.thread_id = a_thread_id and b.checkpoint_ns = a_ns and b.channel = w.channel and b.version = w.seed_version
    where w.seed_kind = 'blob'
    union all
    -- ... or the checkpoint that may hold it inline
    select w.channel, 'checkpoint', w.ancestor_id, null, null, c.type, c.checkpoint, 0, 0, ''
    from walk w
    join ai.checkpoints c
      on c.thread_id = a_thread_id and c.checkpoint_ns = a_ns and c.checkpoint_id = w.ancestor_id
    where w.seed_kind = 'checkpoint'
    union all
    -- then the writes, oldest ancestor first, each step's in (task_path, task_id, idx) order
    select w.channel, 'write', w.ancestor_id, x.task_id::text, x.idx, x.type, x.blob, 1, w.depth, x.task_path::text
    from walk w
    join ai.checkpoint_writes x
      on x.thread_id = a_thread_id and x.checkpoint_ns = a_ns and x.checkpoint_id = w.ancestor_id
         and x.channel = w.channel
  ) s
  order by s.channel, s.part, s.depth desc, s.task_path, s.task_id, s.idx;
end
$$;
comment on function ai.delta_channel_history(text, text, text, text[]) is
  'LangGraph''s get_delta_channel_history in one call: for each channel, the value a DeltaChannel is rebuilt from (kind ''seed'': the nearest ancestor''s stored value, type and blob; or ''checkpoint'': that ancestor''s checkpoint bytes, where a small pre-delta value may be inline) and the pending writes of the ancestors since, oldest first (kind ''write''). Walks the parent chain from the parent of checkpoint_id (NULL: the newest of the namespace) in one index range scan; the target''s own writes are not included. No rows for an unknown checkpoint (or another tenant''s). AS002 bad argument.';

revoke execute on function ai._delta_walk(text, text, text, text[]),
  ai.delta_channel_history(text, text, text, text[]) from public;
grant execute on function ai.delta_channel_history(text, text, text, text[]) to ai_user, ai_service;

-- ---------------------------------------------------------------------------------------------
-- Copying and forgetting

-- The session a copy goes to: new, same owner as the source (also when a service copies).
create or replace function ai._create_copy_session(source_thread_id text, target_thread_id text) returns text
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_source ai.agent_sessions;
begin
  select * into v_source from ai.agent_sessions s where s.thread_id = source_thread_id;
  if not found then
    raise exception using errcode = 'AS001', message = format('thread %s not found', source_thread_id);
  end if;
  if not ai._start_session(target_thread_id, v_source.owner, v_source.config,
                           pg_catalog.jsonb_build_object('config', v_source.config, 'copied_from', source_thread_id)) then
    raise exception using errcode = 'AS005', message = format('thread id %s is not available', target_thread_id),
      hint = 'copy or fork into a new thread id';
  end if;
  return v_source.owner;
end
$$;
comment on function ai._create_copy_session(text, text) is 'Internal: creates the target session of a copy or fork with the source''s owner and config. AS001 unknown source, AS005 target id taken.';

-- Copies checkpoints (of one namespace, or all when NULL; the given ids, or all when NULL) with
-- their pending writes and the channel values they name. Returns the checkpoints copied.
create or replace function ai._copy_checkpoint_rows(source_thread_id text, target_thread_id text, owner text,
                                         checkpoint_ns text, checkpoint_ids text[]) returns integer
language plpgsql volatile
as $$
#variable_conflict use_column
declare
  a_source alias for $1;
  a_target alias for $2;
  a_owner alias for $3;
  a_ns alias for $4;
  a_ids alias for $5;
  v_count integer;
begin
  insert into ai.checkpoints (thread_id, checkpoint_ns, checkpoint_id, owner, parent_checkpoint_id, type,
                              checkpoint, metadata, channel_versions, created_at)
  select a_target, c.checkpoint_ns, c.checkpoint_id, a_owner, c.parent_checkpoint_id, c.type,
         c.checkpoint, c.metadata, c.channel_versions, c.created_at
  from ai.checkpoints c
  where c.thread_id = a_source
    and (a_ns is null or c.checkpoint_ns = a_ns)
    and (a_ids is null or c.checkpoint_id = any (a_ids));
  get diagnostics v_count = row_count;

  insert into ai.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, owner, channel,
                                    type, blob, task_path)
  select a_target, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.idx, a_owner, w.channel, w.type, w.blob,
         w.task_path
  from ai.checkpoint_writes w
  where w.thread_id = a_source
    and (a_ns is null or w.checkpoint_ns = a_ns)
    and (a_ids is null or w.checkpoint_id = any (a_ids));

  -- the values the copied checkpoints name (one hash of them, not a scan per blob)
  insert into ai.checkpoint_blobs (thread_id, checkpoint_ns, channel, version, owner, type, blob)
  select a_target, b.checkpoint_ns, b.channel, b.version, a_owner, b.type, b.blob
  from (select distinct c.checkpoint_ns, v.key, v.value
        from ai.checkpoints c
        cross join lateral pg_catalog.jsonb_each_text(c.channel_versions) v
        where c.thread_id = a_target) r
  join ai.checkpoint_blobs b
    on b.thread_id = a_source and b.checkpoint_ns = r.checkpoint_ns and b.channel = r.key and b.version = r.value;
  return v_count;
end
$$;
comment on function ai._copy_checkpoint_rows(text, text, text, text, text[]) is 'Internal: copies checkpoints of a thread (one namespace or all, some ids or all) with their writes and channel values into another thread of the given owner.';

create or replace function ai.fork_thread(
  source_thread_id text,
  checkpoint_id text,
  new_thread_id text default null,
  checkpoint_ns text default ''
) returns text
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_source alias for $1;
  a_checkpoint_id alias for $2;
  a_ns alias for $4;
  v_target text := coalesce($3, pg_catalog.gen_random_uuid()::text);
  v_owner text;
  v_ids text[];
begin
  perform ai._check_thread_id(a_source);
  perform ai._check_text(a_checkpoint_id, 'checkpoint_id');
  perform ai._check_thread_id(v_target);
  perform ai._check_checkpoint_ns(a_ns);
  select array_agg(l.checkpoint_id) into v_ids
  from ai.checkpoint_lineage(a_source, a_checkpoint_id, a_ns, 'ancestors') l;  -- AS001 when unknown
  v_owner := ai._create_copy_session(a_source, v_target);
  perform ai._copy_checkpoint_rows(a_source, v_target, v_owner, a_ns, v_ids);
  if a_ns = '' then
    perform ai._reset_current_checkpoint(array[v_target]);
  end if;
  -- What the model was given up to the checkpoint (ai.turn_retrievals, made by the later change
  -- `retrievals`: PL/pgSQL resolves the table when this runs): the retrievals recorded at or before
  -- it was saved (the timeline rule of ai.trajectory), with their ids and keys. Not copied: the
  -- message log (the reference a replay on the fork is compared with), hidden marks and streams
  -- (they belong to messages), usage (billing of the source: a copy would charge its calls twice).
  -- docs/streams-usage-retrievals.md
  insert into ai.turn_retrievals (thread_id, retrieval_id, owner, turn, idempotency_key, documents, created_at)
  overriding system value
  select v_target, r.retrieval_id, v_owner, r.turn, r.idempotency_key, r.documents, r.created_at
  from ai.turn_retrievals r
  where r.thread_id = a_source
    and r.created_at <= (select c.created_at from ai.checkpoints c
                         where c.thread_id = a_source and c.checkpoint_ns = a_ns and c.checkpoint_id = a_checkpoint_id);
  return v_target;
end
$$;
comment on function ai.fork_thread(text, text, text, text) is
  'Copies one checkpoint and its ancestors (with their pending writes and channel values) into a new thread of the same owner, with the turn retrievals recorded at or before that checkpoint was saved (same ids and keys), so a replay can run from there without touching the source; returns the new thread id (a fresh UUID when new_thread_id is NULL). Not copied: messages (and so hidden marks and streams: the source''s log, which a replay is compared with) and usage records (billing of the source: copying would charge its calls twice). AS001 unknown thread or checkpoint, AS002 bad argument, AS005 new_thread_id taken.';

create or replace function ai.copy_thread(source_thread_id text, target_thread_id text) returns integer
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_owner text;
  v_count integer;
begin
  perform ai._check_thread_id(source_thread_id);
  perform ai._check_thread_id(target_thread_id);
  v_owner := ai._create_copy_session(source_thread_id, target_thread_id);
  v_count := ai._copy_checkpoint_rows(source_thread_id, target_thread_id, v_owner, null, null);
  perform ai._reset_current_checkpoint(array[target_thread_id]);
  return v_count;
end
$$;
comment on function ai.copy_thread(text, text) is
  'Copies every checkpoint, pending write and channel value of a thread (all namespaces) into a new thread of the same owner; returns the checkpoints copied. AS001 unknown source (or another tenant''s), AS002 bad argument, AS005 target id taken.';

create or replace function ai.delete_thread(thread_id text) returns boolean
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  v_now timestamptz := ai.now();
  v_owner text;
begin
  perform ai._check_thread_id(a_thread_id);
  -- The session row first (locked here, deleted by the tombstone's trigger in this transaction):
  -- a concurrent put waits on it, then finds the tombstone.
  select s.owner into v_owner from ai.agent_sessions s where s.thread_id = a_thread_id for update;
  if not found then
    return false;  -- unknown, or another tenant's: nothing the caller may delete
  end if;
  insert into ai.deleted_threads (thread_id, owner, deleted_at)
  values (a_thread_id, v_owner, v_now)
  on conflict (thread_id, owner) do update set deleted_at = excluded.deleted_at;
  return true;
end
$$;
comment on function ai.delete_thread(text) is
  'Deletes a thread and everything it owns (session, messages, events, checkpoints, writes, channel values) and leaves a tombstone, so a late checkpoint or write raises AS020 instead of re-creating it. Returns false (and does nothing) for an unknown thread or another tenant''s. AS002 bad argument.';

create or replace function ai.delete_for_runs(run_ids text[]) returns integer
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_threads text[];
  v_count integer;
begin
  if run_ids is null or array_position(run_ids, null) is not null then
    raise exception using errcode = 'AS002', message = 'run_ids must not be NULL or contain NULL';
  end if;
  if pg_catalog.cardinality(run_ids) = 0 then
    return 0;
  end if;
  with gone as (
    delete from ai.checkpoints c
    using pg_catalog.unnest(run_ids) as r(run_id)
    where c.metadata @> pg_catalog.jsonb_build_object('run_id', r.run_id)
    returning c.thread_id, c.checkpoint_ns, c.checkpoint_id
  ), gone_writes as (
    delete from ai.checkpoint_writes w
    using gone g
    where w.thread_id = g.thread_id and w.checkpoint_ns = g.checkpoint_ns and w.checkpoint_id = g.checkpoint_id
  )
  select array_agg(distinct g.thread_id), count(*) into v_threads, v_count from gone g;
  if v_count > 0 then
    perform ai._collect_checkpoint_blobs(v_threads);
    perform ai._reset_current_checkpoint(v_threads);
  end if;
  return v_count;
end
$$;
comment on function ai.delete_for_runs(text[]) is
  'Deletes the checkpoints whose metadata run_id is one of run_ids (in every thread the caller sees), with their pending writes and the channel values no remaining checkpoint uses; returns the checkpoints deleted. AS002 bad argument.';

create or replace function ai.prune_checkpoints(thread_ids text[], strategy text default 'keep_latest') returns integer
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_count integer;
begin
  if thread_ids is null or array_position(thread_ids, null) is not null then
    raise exception using errcode = 'AS002', message = 'thread_ids must not be NULL or contain NULL';
  end if;
  if strategy is null or strategy not in ('keep_latest', 'delete') then
    raise exception using errcode = 'AS002',
      message = format('strategy %s is not keep_latest or delete', coalesce(pg_catalog.quote_literal(strategy), 'NULL'));
  end if;
  if pg_catalog.cardinality(thread_ids) = 0 then
    return 0;
  end if;
  if strategy = 'delete' then
    delete from ai.checkpoint_writes w where w.thread_id = any (thread_ids);
    delete from ai.checkpoint_blobs b where b.thread_id = any (thread_ids);
    delete from ai.checkpoints c where c.thread_id = any (thread_ids);
    get diagnostics v_count = row_count;
  else
    -- Keep the newest checkpoint of each (thread, namespace) with its writes and the values it
    -- names; and, for each DeltaChannel whose value it does not store (the channels its metadata
    -- counts in counters_since_delta_snapshot), the ancestors that value is rebuilt from, back to
    -- the nearest stored one (ai._delta_walk), with their writes.
    with latest as (
      select distinct on (c.thread_id, c.checkpoint_ns) c.thread_id, c.checkpoint_ns, c.checkpoint_id,
             c.metadata, c.channel_versions
      from ai.checkpoints c
      where c.thread_id = any (thread_ids)
      order by c.thread_id, c.checkpoint_ns, c.checkpoint_id desc
    ), kept as materialized (
      select l.thread_id, l.checkpoint_ns, l.checkpoint_id from latest l
      union
      select l.thread_id, l.checkpoint_ns, w.ancestor_id
      from latest l
      cross join lateral ai._delta_walk(
        l.thread_id, l.checkpoint_ns, l.checkpoint_id,
        array(select k.key
              from pg_catalog.jsonb_each(l.metadata -> 'counters_since_delta_snapshot') k
              where not exists (select from ai.checkpoint_blobs b
                                where b.thread_id = l.thread_id and b.checkpoint_ns = l.checkpoint_ns
                                  and b.channel = k.key and b.version = l.channel_versions ->> k.key))) w
      where pg_catalog.jsonb_typeof(l.metadata -> 'counters_since_delta_snapshot') = 'object'
    ), gone as (
      delete from ai.checkpoints c
      where c.thread_id = any (thread_ids)
        and not exists (select from kept k where k.thread_id = c.thread_id
                          and k.checkpoint_ns = c.checkpoint_ns and k.checkpoint_id = c.checkpoint_id)
      returning c.thread_id, c.checkpoint_ns, c.checkpoint_id
    ), gone_writes as (
      delete from ai.checkpoint_writes w
      using gone g
      where w.thread_id = g.thread_id and w.checkpoint_ns = g.checkpoint_ns and w.checkpoint_id = g.checkpoint_id
    ), orphaned as (
      -- a kept checkpoint whose parent is gone becomes a root
      update ai.checkpoints c set parent_checkpoint_id = null
      from kept k
      where c.thread_id = k.thread_id and c.checkpoint_ns = k.checkpoint_ns and c.checkpoint_id = k.checkpoint_id
        and c.parent_checkpoint_id is not null
        and not exists (select from kept p where p.thread_id = c.thread_id and p.checkpoint_ns = c.checkpoint_ns
                          and p.checkpoint_id = c.parent_checkpoint_id)
    )
    select count(*) into v_count from gone;
    perform ai._collect_checkpoint_blobs(thread_ids);
  end if;
  perform ai._reset_current_checkpoint(thread_ids);
  return v_count;
end
$$;
comment on function ai.prune_checkpoints(text[], text) is
  'Retention for the given threads: ''keep_latest'' keeps the newest checkpoint of each namespace (with its pending writes and channel values) and, for the LangGraph DeltaChannels whose value it does not store, the ancestors that value is rebuilt from (back to the nearest stored value, with their writes); the oldest kept checkpoint loses its parent. ''delete'' removes all checkpoints, writes and values. The sessions stay. Returns the checkpoints deleted. AS002 bad argument.';

create or replace function ai.prune_idle_threads(idle interval, strategy text default 'keep_latest') returns integer
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_cutoff timestamptz;
  v_threads text[];
begin
  if idle is null or idle < interval '0' then
    raise exception using errcode = 'AS002', message = 'idle must be a non-negative interval';
  end if;
  if strategy is null or strategy not in ('keep_latest', 'delete') then
    raise exception using errcode = 'AS002',
      message = format('strategy %s is not keep_latest or delete', coalesce(pg_catalog.quote_literal(strategy), 'NULL'));
  end if;
  v_cutoff := ai.now() - idle;
  -- idle = no checkpoint newer than the cutoff (newest per thread: one backward probe of the index)
  select array_agg(s.thread_id) into v_threads
  from ai.agent_sessions s
  cross join lateral (select max(c.created_at) as newest from ai.checkpoints c where c.thread_id = s.thread_id) n
  where n.newest < v_cutoff;
  if v_threads is null then
    return 0;
  end if;
  perform ai.prune_checkpoints(v_threads, strategy);
  return pg_catalog.cardinality(v_threads);
end
$$;
comment on function ai.prune_idle_threads(interval, text) is
  'Retention by age: prunes (ai.prune_checkpoints with the given strategy) every thread the caller sees whose newest checkpoint is older than now - idle; returns how many threads. AS002 bad argument.';

revoke execute on function
  ai._check_checkpoint_ns(text), ai._check_blob_sizes(bytea, text[], text[], bytea[]), ai._fence(bigint, bigint),
  ai._checkpoint_thread_owner(text), ai._collect_checkpoint_blobs(text[]), ai._reset_current_checkpoint(text[]),
  ai._create_copy_session(text, text), ai._copy_checkpoint_rows(text, text, text, text, text[]),
  ai.put_checkpoint(text, text, text, text, text, bytea, jsonb, jsonb, text[], text[], text[], bytea[], bigint, bigint, text),
  ai.put_writes(text, text, text, text, integer[], text[], text[], bytea[], text, bigint, bigint),
  ai._checkpoint_tuple(ai.checkpoints), ai._list_checkpoints_any(text, text, text, integer, jsonb),
  ai.get_checkpoint(text, text, text), ai.list_checkpoints(text, text, text, integer, jsonb),
  ai.checkpoint_lineage(text, text, text, text), ai.checkpoints_between(text, timestamptz, timestamptz),
  ai.fork_thread(text, text, text, text), ai.copy_thread(text, text), ai.delete_thread(text),
  ai.delete_for_runs(text[]), ai.prune_checkpoints(text[], text), ai.prune_idle_threads(interval, text)
from public;
grant execute on function
  ai.put_checkpoint(text, text, text, text, text, bytea, jsonb, jsonb, text[], text[], text[], bytea[], bigint, bigint, text),
  ai.put_writes(text, text, text, text, integer[], text[], text[], bytea[], text, bigint, bigint),
  ai.get_checkpoint(text, text, text), ai.list_checkpoints(text, text, text, integer, jsonb),
  ai.checkpoint_lineage(text, text, text, text), ai.checkpoints_between(text, timestamptz, timestamptz),
  ai.fork_thread(text, text, text, text), ai.copy_thread(text, text), ai.delete_thread(text),
  ai.delete_for_runs(text[]), ai.prune_checkpoints(text[], text), ai.prune_idle_threads(interval, text)
to ai_user, ai_service;

commit;
