-- Deploy agent-state:checkpoints_functions to pg
-- Reworked after v0.1.0; the tagged script is deploy/checkpoints_functions@v0.1.0.sql.
-- requires: checkpoints
-- requires: checkpoint_deltas
-- requires: checkpoint_delta_depth
-- requires: queue_functions
-- requires: sessions_functions
--
-- The functions and triggers of checkpoints (its tables, indexes and row rules:
-- deploy/checkpoints.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework checkpoints_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

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
-- Replaced only when it differs from this definition (as pg_get_triggerdef prints it): CREATE OR
-- REPLACE TRIGGER locks the table against every writer (SHARE ROW EXCLUSIVE) and queues behind any
-- open transaction that wrote to it, so a deploy over an unchanged trigger takes no table lock; a
-- changed one waits at most lock_timeout (docs/operations.md, "Upgrading under a live fleet").
do $do$
begin
  if (select pg_catalog.pg_get_triggerdef(t.oid) from pg_catalog.pg_trigger t
      where t.tgrelid = 'ai.deleted_threads'::pg_catalog.regclass and t.tgname = 'deleted_threads_delete_session')
     is distinct from $t$CREATE TRIGGER deleted_threads_delete_session AFTER INSERT OR UPDATE ON ai.deleted_threads FOR EACH ROW EXECUTE FUNCTION ai._delete_tombstoned_session()$t$ then
    if pg_catalog.current_setting('lock_timeout') = '0' then
      perform pg_catalog.set_config('lock_timeout', '5s', true);
    end if;
    create or replace trigger deleted_threads_delete_session
      after insert or update on ai.deleted_threads
      for each row execute function ai._delete_tombstoned_session();
  end if;
end
$do$;

-- ---------------------------------------------------------------------------------------------
-- The step's records

-- The parts of a durable step, as ai.put_checkpoint takes them: one record per thing that belongs
-- together, instead of 23 positional arguments (issue 34 item 7). Each is written in a call's SQL
-- text as `row(...)::ai.<type>`; a NULL record (or one whose fields are all NULL) is "none". They
-- are defined here, with the function whose signature takes them, not in a change planned after
-- the release: the bundle (scripts/bundle.sh) holds this change's current script at the place of
-- its first occurrence, where a type of a later change would not exist yet. Made only when
-- missing, as the CREATE OR REPLACE of the functions: a rework that changes a type's fields
-- drops and makes it again.

-- The checkpoint's new channel values: parallel arrays, one element per (channel, version). A
-- NULL in bases (or bases NULL) is a whole value; a version names the version of the same channel
-- whose list this value extends with its items (a delta: deploy/checkpoint_deltas.sql).
do $do$ begin
  create type ai.checkpoint_values as (
    channels text[],
    versions text[],
    types text[],
    blobs bytea[],
    bases text[]
  );
exception when duplicate_object then null;  -- this change deployed over itself
end $do$;
comment on type ai.checkpoint_values is 'The new channel values of a checkpoint, for ai.put_checkpoint: parallel arrays channels/versions/types/blobs, and bases (NULL, or per value the version it extends as a delta; NULL elements are whole values).';

-- One task's pending writes, as ai.put_writes stores them: put_checkpoint's held writes, for the
-- parent checkpoint.
do $do$ begin
  create type ai.task_writes as (
    task_id text,
    task_path text,
    idx integer[],
    channels text[],
    types text[],
    blobs bytea[]
  );
exception when duplicate_object then null;  -- this change deployed over itself
end $do$;
comment on type ai.task_writes is 'One task''s pending writes, for ai.put_checkpoint (held writes for the parent checkpoint): the task, its path, and parallel arrays idx/channels/types/blobs.';

-- How a step's transaction commits: for which job (the fence, ai._fence: job_id and
-- fencing_token, both or neither) and how durably ('sync', or 'async': synchronous_commit off for
-- this transaction only).
do $do$ begin
  create type ai.step_commit as (
    job_id bigint,
    fencing_token bigint,
    durability text
  );
exception when duplicate_object then null;  -- this change deployed over itself
end $do$;
comment on type ai.step_commit is 'How a step written by ai.put_checkpoint commits: fenced by a job (job_id and fencing_token, both or neither) and its durability (''sync'' or ''async''; NULL record: no fence, sync).';

-- ---------------------------------------------------------------------------------------------
-- Guards and helpers

-- A key that a btree index holds beside others, counted in bytes of UTF-8, not characters (issue
-- 37): the checkpoint tables' keys (checkpoint id, parent, channel name and version, task id; the
-- namespace has its own guard below) and an eval run's candidate. Beside a thread id or an owner of
-- 255 characters, the widest entry (checkpoint_blobs' or checkpoint_writes' primary key) stays
-- under the btree's 2704 bytes in any text, where 255 characters of four bytes each would be
-- refused with 54000. In ASCII a byte is a character, so the limit is the same.
create or replace function ai._check_key(value text, argument text, max_bytes integer default 255) returns void
language plpgsql immutable parallel safe
as $$
begin
  if value is null then
    raise exception using errcode = 'AS002', message = format('%s must not be NULL', argument);
  end if;
  if value = '' then
    raise exception using errcode = 'AS002', message = format('%s must not be empty', argument);
  end if;
  if pg_catalog.octet_length(value) > max_bytes then
    raise exception using errcode = 'AS002',
      message = format('%s is longer than %s bytes (%s bytes of UTF-8)', argument, max_bytes, pg_catalog.octet_length(value));
  end if;
end
$$;
comment on function ai._check_key(text, text, integer) is 'Internal guard: raises AS002 when an index key counted in bytes (a checkpoint id, channel, version or task id; an eval candidate) is NULL, empty or over max_bytes bytes of UTF-8 (default 255).';

create or replace function ai._check_checkpoint_ns(checkpoint_ns text) returns void
language plpgsql immutable parallel safe
as $$
begin
  if checkpoint_ns is null then
    raise exception using errcode = 'AS002', message = 'checkpoint_ns must not be NULL (the root namespace is '''')';
  end if;
  if pg_catalog.octet_length(checkpoint_ns) > 1024 then
    raise exception using errcode = 'AS002',
      message = format('checkpoint_ns is longer than 1024 bytes (%s bytes of UTF-8)', pg_catalog.octet_length(checkpoint_ns));
  end if;
end
$$;
comment on function ai._check_checkpoint_ns(text) is 'Internal guard: raises AS002 unless checkpoint_ns is a text of at most 1024 bytes of UTF-8 (empty is the root).';

-- Sizes: a checkpoint, each channel value and each pending write up to 16 MiB (AS003); channel
-- names and versions, which are index keys, up to 255 bytes of UTF-8 (AS002; longer ones would hit
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
    if pg_catalog.octet_length(u.channel) > 255 then
      raise exception using errcode = 'AS002', message = 'a channel name is longer than 255 bytes';
    end if;
    if pg_catalog.octet_length(u.version) > 255 then
      raise exception using errcode = 'AS002',
        message = format('the version of channel %s is longer than 255 bytes', u.channel);
    end if;
    if pg_catalog.octet_length(u.blob) > v_max then
      raise exception using errcode = 'AS003',
        message = format('the value of channel %s is %s bytes, over the limit of %s', u.channel, pg_catalog.octet_length(u.blob), v_max);
    end if;
  end loop;
end
$$;
comment on function ai._check_blob_sizes(bytea, text[], text[], bytea[]) is 'Internal guard: AS003 for a checkpoint or a value over 16 MiB, AS002 for a channel name or version over 255 bytes of UTF-8.';

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
  if not found and exists (select from ai_archive.agent_sessions a where a.thread_id = a_thread_id) then
    -- the caller's own archived thread (RLS shows no other tenant's): reserved until restored
    raise exception using errcode = 'AS005',
      message = format('thread %s is archived: a write does not re-create it', a_thread_id),
      hint = 'an operator brings it back with ai.restore_session; or use a new thread_id';
  end if;
  if not found then
    raise exception using errcode = 'AS001', message = format('thread %s not found', a_thread_id);
  end if;
  return v_owner;
end
$$;
comment on function ai._checkpoint_thread_owner(text) is 'Internal: the owner of the thread a checkpoint goes to, creating the session for the caller when the thread is new. AS001 another tenant''s thread (hot or archived), AS005 a thread the caller archived, AS020 a thread the caller deleted.';

-- Blobs no remaining checkpoint of their (thread, namespace) references, for the given threads.
create or replace function ai._collect_checkpoint_blobs(thread_ids text[]) returns bigint
language plpgsql volatile
as $$
declare
  v_count bigint;
begin
  -- the versions the checkpoints name, and every version a kept delta extends
  with recursive referenced as (
    select c.thread_id, c.checkpoint_ns, v.key collate "C" as channel, v.value collate "C" as version
    from ai.checkpoints c
    cross join lateral pg_catalog.jsonb_each_text(c.channel_versions) v
    where c.thread_id = any (thread_ids)
    union
    select b.thread_id, b.checkpoint_ns, b.channel, b.base_version
    from referenced r
    join ai.checkpoint_blobs b
      on b.thread_id = r.thread_id and b.checkpoint_ns = r.checkpoint_ns and b.channel = r.channel
         and b.version = r.version
    where b.base_version is not null
      and b.thread_id = any (thread_ids)  -- said again: Citus runs a recursive CTE on the shards it names
  ), kept as materialized (select * from referenced)
  delete from ai.checkpoint_blobs b
  where b.thread_id = any (thread_ids)
    and not exists (select from kept r
                    where r.thread_id = b.thread_id and r.checkpoint_ns = b.checkpoint_ns
                      and r.channel = b.channel and r.version = b.version);
  get diagnostics v_count = row_count;
  return v_count;
end
$$;
comment on function ai._collect_checkpoint_blobs(text[]) is 'Internal: deletes the channel values no checkpoint of their thread and namespace references any more, directly or as the base of a referenced delta; returns how many.';

-- Values that name a pending write (deploy/checkpoint_write_refs.sql) get its bytes back, before
-- a deleting path deletes writes: in the given threads, those whose write belongs to a checkpoint
-- of one of run_ids (delete_for_runs), or all of them (run_ids NULL: prune keep_latest, which
-- then keeps only the newest checkpoints' writes). The callers hold the threads' sessions locked.
create or replace function ai._unname_writes(thread_ids text[], run_ids text[]) returns bigint
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_count bigint;
  -- the runs' metadata, {"run_id": ...} each, built here: an UPDATE of a distributed table on
  -- Citus may apply no STABLE function (jsonb_build_object) to a column
  v_runs jsonb[] := (select pg_catalog.array_agg(pg_catalog.jsonb_build_object('run_id', r.run_id))
                     from pg_catalog.unnest($2) as r(run_id));
begin
  update ai.checkpoint_blobs b
  set blob = w.blob, write_checkpoint_id = null, write_task_id = null, write_idx = null
  from ai.checkpoint_writes w
  where b.thread_id = any ($1) and b.write_task_id is not null
    and w.thread_id = b.thread_id and w.checkpoint_ns = b.checkpoint_ns and w.checkpoint_id = b.write_checkpoint_id
    and w.task_id = b.write_task_id and w.idx = b.write_idx
    and ($2 is null or exists (select from ai.checkpoints c
                               where c.thread_id = b.thread_id and c.checkpoint_ns = b.checkpoint_ns
                                 and c.checkpoint_id = b.write_checkpoint_id
                                 and c.metadata @> any (v_runs)));
  get diagnostics v_count = row_count;
  return v_count;
end
$$;
comment on function ai._unname_writes(text[], text[]) is 'Internal: gives the values that name a pending write (checkpoint_blobs.write_*) the write''s bytes, in the given threads: those naming a write of a checkpoint of run_ids, or all (run_ids NULL); before a path deletes writes. Returns how many.';
revoke execute on function ai._unname_writes(text[], text[]) from public;

-- The deleting paths (prune_checkpoints, so prune_idle_threads, and delete_for_runs) lock their
-- threads' sessions and so wait for every put in flight; at read committed each statement after
-- the lock sees what those puts committed, and keeps the versions their deltas extend. A repeatable
-- read or serializable transaction keeps the snapshot of its first statement: it would delete a
-- version a delta committed meanwhile extends (the thread then raises AS060 for good), so it is
-- refused before anything is deleted (issue 34 item 2).
create or replace function ai._check_deletes_at_read_committed(caller text) returns void
language plpgsql stable
as $$
begin
  if pg_catalog.current_setting('transaction_isolation') <> 'read committed' then
    raise exception using errcode = 'AS062',
      message = format('%s deletes checkpoints, which needs read committed: a %s transaction cannot see what runs committed while it waited',
                       caller, pg_catalog.current_setting('transaction_isolation'));
  end if;
end
$$;
comment on function ai._check_deletes_at_read_committed(text) is
  'Internal guard of the functions that delete checkpoints: AS062 in a repeatable read or serializable transaction, whose snapshot misses the versions that runs committed meanwhile extend.';
revoke execute on function ai._check_deletes_at_read_committed(text) from public;

-- The session's current checkpoint is read from ai.checkpoints (ai.get_session); nothing resets it.
drop function if exists ai._reset_current_checkpoint(text[]);

-- The value of a channel version stored as a delta (ai.checkpoint_blobs.base_version, deploy/
-- checkpoint_deltas.sql): the whole value it extends, then every delta on the way, as one msgpack
-- array. One primary-key probe per link. Chains are acyclic (a delta's base exists when it is
-- written, and a row is never rewritten: put_checkpoint inserts values with DO NOTHING).
-- The key is compared in the collations of the primary key's columns (thread_id the database's
-- default, the others "C"), named here, never taken from the call: a PL/pgSQL parameter takes the
-- collation of the call's arguments, and the checkpoint reads pass "C" columns with thread_id, so
-- a plain `b.thread_id = $1` compared in "C", which the index (in the default collation) cannot
-- answer: each link then scanned that channel's rows of every thread and tenant (issue 34 item 3;
-- tests/python/test_checkpoint_read_plans.py holds the plan to the index).
create or replace function ai._rebuilt_value(thread_id text, checkpoint_ns text, channel text, version text)
returns bytea
language plpgsql stable
as $$
declare
  v_thread text collate "default" := $1;
  v_ns text collate "C" := $2;
  v_channel text collate "C" := $3;
  v_version text collate "C" := $4;
  v_parts bytea[];
  v_whole boolean;
begin
  with recursive chain as (
    select b.base_version,
           coalesce(b.blob, (select w.blob from ai.checkpoint_writes w
                             where w.thread_id = v_thread and w.checkpoint_ns = v_ns
                               and w.checkpoint_id = b.write_checkpoint_id and w.task_id = b.write_task_id
                               and w.idx = b.write_idx)) as blob,
           0 as depth
    from ai.checkpoint_blobs b
    where b.thread_id = v_thread and b.checkpoint_ns = v_ns and b.channel = v_channel and b.version = v_version
    union all
    -- a probe per link (LATERAL ... LIMIT 1): as a join, the planner, which expects a short
    -- chain, hashed the thread's whole channel at every link (quadratic in the chain's length)
    select b.base_version, b.blob, c.depth + 1
    from chain c
    cross join lateral (
      select b.base_version,
             coalesce(b.blob, (select w.blob from ai.checkpoint_writes w
                               where w.thread_id = v_thread and w.checkpoint_ns = v_ns
                                 and w.checkpoint_id = b.write_checkpoint_id and w.task_id = b.write_task_id
                                 and w.idx = b.write_idx)) as blob
      from ai.checkpoint_blobs b
      where b.thread_id = v_thread and b.checkpoint_ns = v_ns and b.channel = v_channel and b.version = c.base_version
      limit 1
    ) b
  )
  select pg_catalog.array_agg(c.blob order by c.depth desc), pg_catalog.bool_or(c.base_version is null)
  into v_parts, v_whole
  from chain c;
  if v_parts is null then
    return null;
  end if;
  if not v_whole or array_position(v_parts, null) is not null then
    raise exception using errcode = 'AS060',
      message = format('the value of channel %s at version %s cannot be rebuilt: a version it extends is missing', v_channel, v_version);
  end if;
  return ai._msgpack_concat(v_parts);
end
$$;
comment on function ai._rebuilt_value(text, text, text, text) is 'Internal: the whole value of a channel version stored as a delta (the value it extends and the items of each delta since, one msgpack array; a delta that names a pending write, checkpoint_blobs.write_*, is that write''s bytes). AS060 when a version or a named write on the way is missing.';

-- ---------------------------------------------------------------------------------------------
-- Writing

-- ---------------------------------------------------------------------------------------------
-- Channel values: whole, or deltas of a bounded depth

-- The most deltas a stored value may be from a whole value (ai.checkpoint_blobs.delta_depth): a
-- read follows at most this many links. A delta past it is stored whole. Chosen from a
-- measurement (docs/benchmarks.md, "Delta chain depth"): each link costs a read one primary-key
-- probe, each whole value costs a write the list's bytes; at 32 a read of a long thread stays
-- within a few probes of a whole value's, and the whole values add 1/32 of the list per step.
create or replace function ai._max_delta_depth() returns integer
language sql immutable parallel safe
as $$ select 32 $$;
comment on function ai._max_delta_depth() is 'Internal: the most deltas a stored channel value may be from a whole value (ai.checkpoint_blobs.delta_depth); put_checkpoint stores a delta past it whole.';

-- Whether bytes are exactly one msgpack array: its header, then as many items as the header says,
-- each complete (walked, not decoded: a string, binary or extension is skipped by its length),
-- and nothing after them. A delta is concatenated with its base by their array headers
-- (ai._msgpack_concat): a header that lies about its items, a value that is not an array, or
-- bytes that are not msgpack would rebuild a wrong value, so put_checkpoint refuses them (AS061).
create or replace function ai._msgpack_is_array(blob bytea) returns boolean
language plpgsql immutable strict parallel safe
as $$
declare
  v_len integer := pg_catalog.length(blob);
  v_pos integer := 0;
  v_pending bigint := 1;
  v_byte integer;
  v_size integer;     -- bytes of a length field that follows the first byte
  v_count bigint;     -- the length field's value
begin
  if v_len = 0 then
    return false;
  end if;
  v_byte := pg_catalog.get_byte(blob, 0);
  if v_byte not between 144 and 159 and v_byte not in (220, 221) then
    return false;
  end if;
  while v_pending > 0 loop
    if v_pos >= v_len then
      return false;
    end if;
    v_byte := pg_catalog.get_byte(blob, v_pos);
    v_pending := v_pending - 1;
    if v_byte <= 127 or v_byte >= 224 or v_byte in (192, 194, 195) then          -- fixint, nil, bool
      v_pos := v_pos + 1;
    elsif v_byte between 128 and 143 then                                          -- fixmap
      v_pending := v_pending + 2 * (v_byte - 128);
      v_pos := v_pos + 1;
    elsif v_byte between 144 and 159 then                                          -- fixarray
      v_pending := v_pending + (v_byte - 144);
      v_pos := v_pos + 1;
    elsif v_byte between 160 and 191 then                                          -- fixstr
      v_pos := v_pos + 1 + (v_byte - 160);
    elsif v_byte in (202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 216) then
      -- float 32/64, uint and int 8/16/32/64, fixext 1/2/4/8/16: fixed sizes
      v_pos := v_pos + 1 + case v_byte when 202 then 4 when 203 then 8 when 204 then 1 when 205 then 2
                                       when 206 then 4 when 207 then 8 when 208 then 1 when 209 then 2
                                       when 210 then 4 when 211 then 8 when 212 then 2 when 213 then 3
                                       when 214 then 5 when 215 then 9 else 17 end;
    elsif v_byte in (196, 197, 198, 199, 200, 201, 217, 218, 219, 220, 221, 222, 223) then
      -- bin, ext, str 8/16/32 (a length), array and map 16/32 (a count)
      v_size := case when v_byte in (196, 199, 217) then 1
                     when v_byte in (197, 200, 218, 220, 222) then 2 else 4 end;
      if v_pos + v_size >= v_len then
        return false;
      end if;
      v_count := pg_catalog.get_byte(blob, v_pos + 1);
      for i in 2 .. v_size loop
        v_count := v_count << 8 | pg_catalog.get_byte(blob, v_pos + i);
      end loop;
      v_pos := v_pos + 1 + v_size;
      if v_byte in (220, 221) then
        v_pending := v_pending + v_count;
      elsif v_byte in (222, 223) then
        v_pending := v_pending + 2 * v_count;
      elsif v_count > v_len then
        return false;
      else
        v_pos := v_pos + v_count::integer + case when v_byte in (199, 200, 201) then 1 else 0 end;  -- ext: its type byte
      end if;
    else                                                                           -- 193: never used
      return false;
    end if;
  end loop;
  return v_pos = v_len;
end
$$;
comment on function ai._msgpack_is_array(bytea) is 'Internal: whether the bytes are exactly one msgpack array (its header, that many complete items, nothing after them): what a channel delta and the whole value it extends must be.';

-- The new channel values of one put_checkpoint (the guards of their arrays are the caller's). A
-- delta (bases[i] set) must extend a stored version of its channel, other than its own, that is a
-- msgpack list like itself (type 'msgpack'; the delta exactly one msgpack array:
-- ai._msgpack_is_array; its base's first byte an array header: walking a whole value, every
-- bound + 1 versions, cost O(list) per chain, 4x the put's time on a 4,000-item list, so a whole
-- value sent through the SQL API whose header lies is not found here; the saver never makes one);
-- else AS061 and the saver sends the whole value. Its depth is its base's plus one; a delta past
-- ai._max_delta_depth() is stored whole instead, rebuilt here from its base (one read of the
-- chain, every that many steps), so no chain grows past the bound whatever the client sends.
-- A delta whose bytes are those of a pending write of the parent checkpoint, as stored (same
-- channel and type, idx >= 0: a row never overwritten; the step's held writes are inserted
-- before this), names that write instead of holding a second copy (blob NULL, write_*: deploy/
-- checkpoint_write_refs.sql): a node's new messages are then stored once, as its write.
-- Each version is stored once: a version already stored is kept as it is.
drop function if exists ai._insert_channel_values(text, text, text, text[], text[], text[], bytea[], text[]);
create or replace function ai._insert_channel_values(thread_id text, checkpoint_ns text, owner text,
                                                     channels text[], versions text[], types text[],
                                                     blobs bytea[], bases text[], parent_checkpoint_id text)
returns void
language plpgsql volatile
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_ns alias for $2;
  a_owner alias for $3;
  a_channels alias for $4;
  a_versions alias for $5;
  a_types alias for $6;
  a_blobs alias for $7;
  a_bases alias for $8;
  a_parent alias for $9;
  v_depths integer[];
  v_write_tasks text[];
  v_write_idx integer[];
  v_base record;
  v_write record;
begin
  if a_bases is not null then
    v_depths := pg_catalog.array_fill(0, array[pg_catalog.cardinality(a_blobs)]);
    v_write_tasks := pg_catalog.array_fill(null::text, array[pg_catalog.cardinality(a_blobs)]);
    v_write_idx := pg_catalog.array_fill(null::integer, array[pg_catalog.cardinality(a_blobs)]);
    for i in 1 .. pg_catalog.cardinality(a_bases) loop
      continue when a_bases[i] is null;
      -- a base stored as a named write is a msgpack array by construction (it was checked as a delta)
      select b.delta_depth, b.type, pg_catalog.get_byte(b.blob, 0) as first_byte
      into v_base
      from ai.checkpoint_blobs b
      where b.thread_id = a_thread_id and b.checkpoint_ns = a_ns and b.channel = a_channels[i]
        and b.version = a_bases[i];
      if not found or a_bases[i] = a_versions[i] or a_types[i] <> 'msgpack' or v_base.type <> 'msgpack'
         or not ai._msgpack_is_array(a_blobs[i])
         or (v_base.first_byte not between 144 and 159 and v_base.first_byte not in (220, 221)) then
        raise exception using errcode = 'AS061',
          message = 'a channel delta extends a version that is not stored, or is not a list of items',
          detail = format('channel %s, version %s, base %s: a delta must be one msgpack array (type msgpack) extending a stored msgpack list of its channel',
                          a_channels[i], a_versions[i], a_bases[i]),
          hint = 'send the whole value (blob_bases NULL)';
      end if;
      if v_base.delta_depth < ai._max_delta_depth() then
        v_depths[i] := v_base.delta_depth + 1;
        if a_parent is not null then
          select w.task_id, w.idx into v_write
          from ai.checkpoint_writes w
          where w.thread_id = a_thread_id and w.checkpoint_ns = a_ns and w.checkpoint_id = a_parent
            and w.idx >= 0 and w.channel = a_channels[i] and w.type = a_types[i] and w.blob = a_blobs[i]
          limit 1;
          if found then
            v_write_tasks[i] := v_write.task_id;
            v_write_idx[i] := v_write.idx;
            a_blobs[i] := null;
          end if;
        end if;
      else
        a_blobs[i] := ai._msgpack_concat(array[ai._rebuilt_value(a_thread_id, a_ns, a_channels[i], a_bases[i]),
                                               a_blobs[i]]);
        a_bases[i] := null;
      end if;
    end loop;
  end if;
  insert into ai.checkpoint_blobs (thread_id, checkpoint_ns, channel, version, owner, type, blob, base_version,
                                   delta_depth, write_checkpoint_id, write_task_id, write_idx)
  select a_thread_id, a_ns, u.channel, u.version, a_owner, u.type, u.blob, u.base, coalesce(u.depth, 0),
         case when u.write_task is not null then a_parent end, u.write_task, u.write_idx
  from unnest(a_channels, a_versions, a_types, a_blobs, coalesce(a_bases, '{}'), coalesce(v_depths, '{}'),
              coalesce(v_write_tasks, '{}'), coalesce(v_write_idx, '{}'))
    as u(channel, version, type, blob, base, depth, write_task, write_idx)
  on conflict (thread_id, checkpoint_ns, channel, version) do nothing;
end
$$;
comment on function ai._insert_channel_values(text, text, text, text[], text[], text[], bytea[], text[], text) is 'Internal: stores a put''s new channel values, each version once; a delta (bases[i] set) at its base''s depth plus one, or whole (rebuilt) past ai._max_delta_depth(); a delta equal to a pending write of the parent checkpoint as a reference to it. AS061 a delta whose base is not stored, or which is not one msgpack array of type msgpack extending a msgpack list.';
revoke execute on function ai._max_delta_depth(), ai._msgpack_is_array(bytea),
  ai._insert_channel_values(text, text, text, text[], text[], text[], bytea[], text[], text) from public;


-- The rows of one task's pending writes (the guards are the caller's): put_writes, and
-- put_checkpoint for the writes a saver held until the step's checkpoint. A retried task writes
-- the same (task_id, idx) again: kept as first written, except the special channels (negative
-- idx: error, interrupt, resume, ...), where the newest wins. The same rule inside one call, as
-- LangGraph's savers apply it write by write (a node that calls interrupt() twice sends two
-- __resume__ writes at once): the last of a negative idx, the first of any other. One row per key
-- also keeps ON CONFLICT DO UPDATE from meeting a row twice.
create or replace function ai._insert_writes(thread_id text, checkpoint_ns text, checkpoint_id text, owner text,
                                             task_id text, task_path text, idx integer[], channels text[],
                                             types text[], blobs bytea[]) returns integer
language plpgsql volatile
as $$
declare
  v_count integer;
begin
  insert into ai.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, owner, channel,
                                    type, blob, task_path)
  select distinct on (u.idx)
         $1, $2, $3, $5, u.idx, $4, u.channel, u.type, u.blob, $6
  from unnest($7, $8, $9, $10) with ordinality as u(idx, channel, type, blob, ord)
  order by u.idx, case when u.idx < 0 then -u.ord else u.ord end
  on conflict on constraint checkpoint_writes_pkey do update
  set channel = excluded.channel, type = excluded.type, blob = excluded.blob, task_path = excluded.task_path
  where ai.checkpoint_writes.idx < 0;
  get diagnostics v_count = row_count;
  return v_count;
end
$$;
comment on function ai._insert_writes(text, text, text, text, text, text, integer[], text[], text[], bytea[]) is 'Internal: inserts one task''s pending writes (first write of an idx kept, the newest of a negative idx); returns the rows written.';

-- The guards of one task's pending writes (put_writes' arguments, and put_checkpoint's held ones).
create or replace function ai._check_writes(task_id text, task_path text, idx integer[], channels text[],
                                            types text[], blobs bytea[]) returns void
language plpgsql immutable
as $$
begin
  if task_id is null or task_id = '' or pg_catalog.octet_length(task_id) > 255 then
    perform ai._check_key(task_id, 'task_id');
  end if;
  if task_path is null then
    raise exception using errcode = 'AS002', message = 'task_path must not be NULL (pass an empty string)';
  end if;
  if idx is null or channels is null or types is null or blobs is null then
    raise exception using errcode = 'AS002', message = 'idx, channels, types and blobs must not be NULL';
  end if;
  if pg_catalog.cardinality(idx) <> pg_catalog.cardinality(blobs)
     or pg_catalog.cardinality(channels) <> pg_catalog.cardinality(blobs)
     or pg_catalog.cardinality(types) <> pg_catalog.cardinality(blobs) then
    raise exception using errcode = 'AS002', message = 'idx, channels, types and blobs must have the same length';
  end if;
  if array_position(idx, null) is not null or array_position(channels, null) is not null
     or array_position(types, null) is not null or array_position(blobs, null) is not null then
    raise exception using errcode = 'AS002', message = 'idx, channels, types and blobs must not contain NULL';
  end if;
  if exists (select from unnest(channels, blobs) as u(channel, blob)
             where pg_catalog.octet_length(u.channel) > 255 or pg_catalog.octet_length(u.blob) > 16777216) then
    perform ai._check_blob_sizes(null, channels, null, blobs);
  end if;
end
$$;
comment on function ai._check_writes(text, text, integer[], text[], text[], bytea[]) is 'Internal guard: AS002 for a bad task id, task path or write arrays (NULL, unequal lengths, NULL elements, a channel name over 255 characters), AS003 for a value over 16 MiB.';
revoke execute on function ai._check_writes(text, text, integer[], text[], text[], bytea[]) from public;

-- The guards of a durable step's arguments (put_checkpoint's; the fence is checked by the caller,
-- ai._fence). The common case is tested inline (plain expressions, no query: this is the hot path
-- of every graph step); a failing argument goes to the shared guard, which raises its error.
create or replace function ai._check_step(thread_id text, checkpoint_ns text, checkpoint_id text,
                                          parent_checkpoint_id text, type text, checkpoint bytea,
                                          metadata jsonb, channel_versions jsonb,
                                          channel_values ai.checkpoint_values, writes ai.task_writes,
                                          durability text) returns void
language plpgsql immutable
as $$
begin
  if thread_id is null or thread_id = '' or pg_catalog.char_length(thread_id) > 255 then
    perform ai._check_thread_id(thread_id);
  end if;
  if checkpoint_ns is null or pg_catalog.octet_length(checkpoint_ns) > 1024 then
    perform ai._check_checkpoint_ns(checkpoint_ns);
  end if;
  if checkpoint_id = '' or pg_catalog.octet_length(checkpoint_id) > 255 then
    perform ai._check_key(checkpoint_id, 'checkpoint_id');
  end if;
  if parent_checkpoint_id = '' or pg_catalog.octet_length(parent_checkpoint_id) > 255 then
    perform ai._check_key(parent_checkpoint_id, 'parent_checkpoint_id');
  end if;
  if type is null or type = '' or pg_catalog.char_length(type) > 64 then
    perform ai._check_text(type, 'type', 64);
  end if;
  if checkpoint is null then
    raise exception using errcode = 'AS002', message = 'checkpoint must not be NULL';
  end if;
  if metadata is null or pg_catalog.jsonb_typeof(metadata) <> 'object'
     or pg_catalog.pg_column_size(metadata) > ai._max_document_bytes() then
    perform ai._check_document(metadata, 'metadata', must_be_object => true);
  end if;
  if channel_versions is null or pg_catalog.jsonb_typeof(channel_versions) <> 'object'
     or pg_catalog.pg_column_size(channel_versions) > ai._max_document_bytes() then
    perform ai._check_document(channel_versions, 'channel_versions', must_be_object => true);
  end if;
  perform ai._check_checkpoint_values(checkpoint, channel_values);
  if durability not in ('sync', 'async') then
    raise exception using errcode = 'AS002',
      message = format('durability %s is not sync or async', pg_catalog.quote_literal(durability));
  end if;
  if (writes).task_id is not null then
    if parent_checkpoint_id is null then
      raise exception using errcode = 'AS002',
        message = 'held writes (writes.task_id) belong to the parent checkpoint: parent_checkpoint_id must not be NULL';
    end if;
    perform ai._check_writes((writes).task_id, (writes).task_path, (writes).idx, (writes).channels,
                             (writes).types, (writes).blobs);
  elsif not (writes is null) then
    raise exception using errcode = 'AS002', message = 'held writes need a task_id';
  end if;
end
$$;
comment on function ai._check_step(text, text, text, text, text, bytea, jsonb, jsonb, ai.checkpoint_values, ai.task_writes, text) is 'Internal guard of ai.put_checkpoint''s arguments: AS002 for a bad key, type, durability, value or write arrays, AS003 for a document, checkpoint or value over its limit.';
revoke execute on function ai._check_step(text, text, text, text, text, bytea, jsonb, jsonb, ai.checkpoint_values, ai.task_writes, text) from public;

-- The guards of a checkpoint's new channel values (ai.checkpoint_values; NULL: none).
create or replace function ai._check_checkpoint_values(checkpoint bytea, channel_values ai.checkpoint_values)
returns void
language plpgsql immutable
as $$
declare
  v ai.checkpoint_values := coalesce(channel_values, row('{}', '{}', '{}', '{}', null)::ai.checkpoint_values);
begin
  if v.channels is null or v.versions is null or v.types is null or v.blobs is null then
    raise exception using errcode = 'AS002', message = 'channel value arrays must not be NULL (pass empty arrays)';
  end if;
  if pg_catalog.cardinality(v.channels) <> pg_catalog.cardinality(v.blobs)
     or pg_catalog.cardinality(v.versions) <> pg_catalog.cardinality(v.blobs)
     or pg_catalog.cardinality(v.types) <> pg_catalog.cardinality(v.blobs)
     or pg_catalog.cardinality(v.bases) <> pg_catalog.cardinality(v.blobs) then
    raise exception using errcode = 'AS002',
      message = 'channels, versions, types, blobs (and bases when given) must have the same length';
  end if;
  if array_position(v.channels, null) is not null or array_position(v.versions, null) is not null
     or array_position(v.types, null) is not null then
    raise exception using errcode = 'AS002', message = 'channel names, versions and types must not contain NULL';
  end if;
  if pg_catalog.octet_length(checkpoint) > 16777216
     or exists (select from unnest(v.channels, v.versions, v.blobs) as u(channel, version, blob)
                where pg_catalog.octet_length(u.channel) > 255 or pg_catalog.octet_length(u.version) > 255
                   or pg_catalog.octet_length(u.blob) > 16777216) then
    perform ai._check_blob_sizes(checkpoint, v.channels, v.versions, v.blobs);
  end if;
end
$$;
comment on function ai._check_checkpoint_values(bytea, ai.checkpoint_values) is 'Internal guard of a checkpoint''s new channel values: AS002 for NULL or unequal arrays, a NULL element, a channel name or version over 255 bytes; AS003 for the checkpoint or a value over 16 MiB.';
revoke execute on function ai._check_checkpoint_values(bytea, ai.checkpoint_values) from public;

-- The step's messages (put_checkpoint's messages: what a saver's mirror_messages sends, each with
-- its idempotency key) in one INSERT ... SELECT, instead of ai.append_messages' call per message.
-- That fast path is taken when every message is what the per-message path would insert as it is
-- (an object with a valid role, content within the document limit, a string idempotency key of at
-- most 255 bytes, distinct in the batch and not yet stored, no turn or token_count), the session
-- takes messages (active or waiting), and no other append of the thread commits a seq meanwhile;
-- the rows are then those ai.append_message_idempotent would write (seq the thread's newest + 1,
-- 2, ..., the token estimate, the same created_at). Anything else (a retry whose keys are stored,
-- a bad message, a finished session, a concurrent append: the unique violation of its seq) goes
-- through ai.append_messages, with its errors and its rules (a retried key returns the original).
create or replace function ai._append_step_messages(thread_id text, owner text, status text, messages jsonb)
returns void
language plpgsql volatile
as $$
declare
  v_fast boolean;
  v_now timestamptz := ai.now();
begin
  select pg_catalog.jsonb_typeof($4) = 'array' and $3 in ('active', 'waiting')
         and pg_catalog.bool_and(pg_catalog.jsonb_typeof(e.m) = 'object'
               and e.m ->> 'role' in ('system', 'user', 'assistant', 'tool_call', 'tool_result')
               and e.m ? 'content' and pg_catalog.jsonb_typeof(e.m -> 'content') <> 'null'
               and pg_catalog.pg_column_size(e.m -> 'content') <= ai._max_document_bytes()
               and pg_catalog.jsonb_typeof(e.m -> 'idempotency_key') = 'string'
               and pg_catalog.octet_length(e.m ->> 'idempotency_key') between 1 and 255
               and not e.m ? 'turn' and not e.m ? 'token_count')
         and pg_catalog.count(distinct e.m ->> 'idempotency_key') = pg_catalog.count(*)
         and not exists (select from ai.session_messages x
                         where x.thread_id = $1
                           and x.idempotency_key = any (array(select y.m ->> 'idempotency_key'
                                                              from pg_catalog.jsonb_array_elements($4) y(m))))
  into v_fast
  from pg_catalog.jsonb_array_elements(case when pg_catalog.jsonb_typeof($4) = 'array' then $4 else '[]' end) e(m);
  if v_fast then
    begin
      insert into ai.session_messages (thread_id, seq, owner, role, content, token_count, turn, idempotency_key,
                                       created_at)
      select $1, n.seq + e.ord, $2, e.m ->> 'role', e.m -> 'content', ai.estimate_tokens(e.m -> 'content'), null,
             e.m ->> 'idempotency_key', v_now
      from (select coalesce(max(x.seq), 0) as seq from ai.session_messages x where x.thread_id = $1) n
      cross join pg_catalog.jsonb_array_elements($4) with ordinality e(m, ord)
      order by e.ord;
      return;
    exception when unique_violation then
      null;  -- another append of the thread took a seq (or a key) first: the per-message path waits its turn
    end;
  end if;
  perform ai.append_messages($1, $4);
end
$$;
comment on function ai._append_step_messages(text, text, text, jsonb) is 'Internal: appends a step''s messages for ai.put_checkpoint in one INSERT when each is a plain new message with its idempotency key and the session takes messages; else (a retry, a bad message, a finished session, a concurrent append) through ai.append_messages, with its rules and errors.';
revoke execute on function ai._append_step_messages(text, text, text, jsonb) from public;

-- The durable step, in one call: a task's pending writes held by the saver until the step's
-- checkpoint (for the parent checkpoint they were written from), the checkpoint with its new
-- channel values (whole, or as the items appended to an earlier version: channel_values.bases),
-- the thread's new messages, and the fence, in one transaction. Its parts are records
-- (the types above), so the call reads as what it holds:
--   select ai.put_checkpoint(thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type,
--            checkpoint, metadata, channel_versions,
--            channel_values => row(channels, versions, types, blobs, bases)::ai.checkpoint_values,
--            writes => row(task_id, task_path, idx, channels, types, blobs)::ai.task_writes,
--            messages => '[...]', step_commit => row(job_id, fencing_token, 'sync')::ai.step_commit)
-- Its steps: the guards (ai._check_step), the fence (ai._fence), the session locked, the deltas'
-- bases checked, the held writes (ai._insert_writes), the values and the checkpoint, the
-- messages (ai._append_step_messages: one INSERT, or ai.append_messages' rules). Nothing on the
-- session row: the session is read and locked FOR KEY SHARE only (what the foreign keys of the
-- rows inserted take anyway), which a claim's thread lock (FOR NO KEY UPDATE) does not wait for,
-- and which makes a delete_thread racing this put either wait for it (and delete what it wrote)
-- or go first (and this put then sees the tombstone: AS020).
drop function if exists ai.put_checkpoint(text, text, text, text, text, bytea, jsonb, jsonb, text[], text[], text[], bytea[], bigint, bigint, text);
drop function if exists ai.put_checkpoint(text, text, text, text, text, bytea, jsonb, jsonb, text[], text[], text[], bytea[], bigint, bigint, text, text[], text, text, integer[], text[], text[], bytea[], jsonb);
create or replace function ai.put_checkpoint(
  thread_id text,
  checkpoint_ns text,
  checkpoint_id text,
  parent_checkpoint_id text,
  type text,
  checkpoint bytea,
  metadata jsonb default '{}',
  channel_versions jsonb default '{}',
  channel_values ai.checkpoint_values default null,
  writes ai.task_writes default null,
  messages jsonb default null,
  step_commit ai.step_commit default null
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
  a_writes alias for $10;
  a_messages alias for $11;
  -- the values' arrays by name (NULL record: none)
  a_blob_channels text[] := coalesce(($9).channels, '{}');
  a_blob_versions text[] := coalesce(($9).versions, '{}');
  a_blob_types text[] := coalesce(($9).types, '{}');
  a_blobs bytea[] := coalesce(($9).blobs, '{}');
  a_bases text[] := ($9).bases;
  a_durability text := coalesce(($12).durability, 'sync');
  v_id text := coalesce($3, ai.ulid());
  v_now timestamptz := ai.now();
  v_owner text;
  v_status text;
begin
  perform ai._check_step(a_thread_id, a_ns, v_id, a_parent_id, a_type, a_checkpoint, a_metadata, a_versions,
                         $9, a_writes, a_durability);
  if ($12).job_id is not null or ($12).fencing_token is not null then
    perform ai._fence(a_thread_id, ($12).job_id, ($12).fencing_token);
  end if;

  if a_durability = 'async' then
    -- This transaction only: a crash may lose it whole, never half of it.
    perform pg_catalog.set_config('synchronous_commit', 'off', true);
  end if;

  -- The session, locked (for key share) until this transaction ends, before the delta check
  -- below: ai.prune_checkpoints and ai.delete_for_runs lock it for update before they delete, so
  -- the base a delta extends cannot be deleted between that check and the commit.
  select s.owner, s.status into v_owner, v_status from ai.agent_sessions s where s.thread_id = a_thread_id
  for key share;
  if v_owner is null then
    v_owner := ai._checkpoint_thread_owner(a_thread_id);
  end if;

  if (a_writes).task_id is not null then
    perform ai._insert_writes(a_thread_id, a_ns, a_parent_id, v_owner, (a_writes).task_id, (a_writes).task_path,
                              (a_writes).idx, (a_writes).channels, (a_writes).types, (a_writes).blobs);
  end if;

  -- The new channel values (whole, or deltas of a bounded depth; AS061 a delta that cannot be
  -- one), after the session's lock above: the base a delta extends cannot be deleted before commit.
  perform ai._insert_channel_values(a_thread_id, a_ns, v_owner, a_blob_channels, a_blob_versions, a_blob_types,
                                    a_blobs, a_bases, a_parent_id);
  insert into ai.checkpoints (thread_id, checkpoint_ns, checkpoint_id, owner, parent_checkpoint_id, type,
                              checkpoint, metadata, channel_versions, created_at)
  values (a_thread_id, a_ns, v_id, v_owner, a_parent_id, a_type, a_checkpoint, a_metadata, a_versions, v_now)
  on conflict (thread_id, checkpoint_ns, checkpoint_id) do update
  set parent_checkpoint_id = excluded.parent_checkpoint_id,
      type = excluded.type,
      checkpoint = excluded.checkpoint,
      metadata = excluded.metadata,
      channel_versions = excluded.channel_versions;

  if a_messages is not null then
    perform ai._append_step_messages(a_thread_id, v_owner, v_status, a_messages);
  end if;
  return v_id;
end
$$;
comment on function ai.put_checkpoint(text, text, text, text, text, bytea, jsonb, jsonb, ai.checkpoint_values, ai.task_writes, jsonb, ai.step_commit) is
  'Saves a durable step in one call and one transaction; returns the checkpoint''s id (a new ULID when checkpoint_id is NULL). The checkpoint and its new channel values (channel_values, an ai.checkpoint_values record: parallel arrays channels/versions/types/blobs, each stored once per version, and bases, naming per value the version of the same channel whose list it extends with these items: a delta, rebuilt whole on read; NULL for a whole value). Putting the same id again replaces the checkpoint. Optionally one task''s pending writes for the parent checkpoint (writes, an ai.task_writes record: task_id, task_path, idx/channels/types/blobs, as ai.put_writes stores them) and messages appended to the thread (a JSON array, as ai.append_messages takes). Creates the session for the caller when the thread is new. step_commit (an ai.step_commit record): job_id + fencing_token make it a fenced write (ai._fence: the caller holds the job, and the job is the thread''s); durability ''async'' commits this transaction with synchronous_commit off (NULL: ''sync''). AS001 another tenant''s thread, AS002 bad argument (checkpoint_ns over 1024 bytes of UTF-8, a checkpoint id, channel name or version over 255 bytes, too), AS003 metadata over 1 MiB or the checkpoint or a value over 16 MiB, AS006 stale fencing token, AS005 a thread the caller archived, AS020 deleted thread, AS061 a delta whose base is not stored, or which is not, like its base, one msgpack array of type msgpack (send the whole value); a delta past ai._max_delta_depth() deltas from a whole value is stored whole; the messages'' errors as ai.append_messages raises them.';

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
  v_owner text;
begin
  -- Guards: inline for the common case, the shared guards raise (see put_checkpoint).
  if a_thread_id is null or a_thread_id = '' or pg_catalog.char_length(a_thread_id) > 255 then
    perform ai._check_thread_id(a_thread_id);
  end if;
  if a_ns is null or pg_catalog.octet_length(a_ns) > 1024 then
    perform ai._check_checkpoint_ns(a_ns);
  end if;
  if a_checkpoint_id is null or a_checkpoint_id = '' or pg_catalog.octet_length(a_checkpoint_id) > 255 then
    perform ai._check_key(a_checkpoint_id, 'checkpoint_id');
  end if;
  perform ai._check_writes(task_id, task_path, idx, channels, types, blobs);
  if job_id is not null or fencing_token is not null then
    perform ai._fence(a_thread_id, job_id, fencing_token);
  end if;

  select s.owner into v_owner from ai.agent_sessions s where s.thread_id = a_thread_id;
  if not found then
    v_owner := ai._checkpoint_thread_owner(a_thread_id);
  end if;
  return ai._insert_writes(a_thread_id, a_ns, a_checkpoint_id, v_owner, task_id, task_path, idx, channels,
                           types, blobs);
end
$$;
comment on function ai.put_writes(text, text, text, text, integer[], text[], text[], bytea[], text, bigint, bigint) is
  'Stores the pending writes of one task run from a checkpoint (parallel arrays idx/channels/types/blobs); idempotent per (task_id, idx): a repeat changes nothing, except for negative idx (special channels), which it overwrites; within one call, the last write of a negative idx and the first of any other idx count. Returns the rows written. The checkpoint need not exist yet (writes may commit before it). job_id + fencing_token make it a fenced write (ai._fence: the caller holds the job, and the job is the thread''s). AS001 another tenant''s thread, AS002 bad argument (checkpoint_ns over 1024 bytes of UTF-8, a checkpoint id, task id or channel name over 255 bytes, too), AS003 a value over 16 MiB, AS006 stale fencing token, AS005 a thread the caller archived, AS020 deleted thread.';

-- ai._checkpoint_tuple (until issue 40) took a checkpoint row and read its values and writes: on a
-- Citus shard the row is of the shard's type, and a probe joined to the row's thread_id was not
-- routed. ai._checkpoint_reads (below) reads the rows, values and writes in one query instead,
-- every probe naming the thread by the argument.
drop function if exists ai._checkpoint_tuple(ai.checkpoints);

-- A read's values with each one stored as a delta (a NULL in blobs) rebuilt whole
-- (ai._rebuilt_value), called by the read's function rather than inside the read's query: on a
-- Citus formation that query runs on the thread's shard, where a function may not start another
-- query across the formation; here the rebuild's probes are queries of their own, routed to the
-- shard. The reads call it only for a row that holds a delta.
create or replace function ai._whole_values(thread_id text, checkpoint_ns text, channels text[],
                                            channel_versions jsonb, blobs bytea[]) returns bytea[]
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_blobs bytea[] := blobs;
begin
  for i in 1 .. pg_catalog.cardinality(v_blobs) loop
    if v_blobs[i] is null then
      v_blobs[i] := ai._rebuilt_value(thread_id, checkpoint_ns, channels[i], channel_versions ->> channels[i]);
    end if;
  end loop;
  return v_blobs;
end
$$;
comment on function ai._whole_values(text, text, text[], jsonb, bytea[]) is 'Internal: the values of a checkpoint read by get_checkpoint or list_checkpoints, each one stored as a delta (NULL in blobs) rebuilt whole.';

-- The read of one thread's checkpoints with their values and pending writes, for get_checkpoint
-- and the one-thread path of list_checkpoints: the newest at most max_rows of the namespace with
-- an id <= upper (and < below, when given) whose metadata contains filter, newest first. An SQL
-- function the planner inlines into each caller's query (no SET, not SECURITY DEFINER, not
-- STRICT), so one server runs the callers' plans as if written there (auto_explain shows the
-- same plans as the query written in each; paired A/B on one server, definitions swapped between
-- alternating rounds, load 7 to 11 on 2 cores: get_checkpoint of a 151-checkpoint thread 0.416 /
-- 0.506, 0.945 / 1.041 and 1.066 / 1.080 ms written / inlined, the inlined one faster in 36 of 72
-- rounds; list_checkpoints of 100, 42.2 / 43.7 and 76.8 / 76.4 ms, 18 of 32). On a Citus formation an
-- inlined SQL function over distributed tables is refused ("parameterized queries for SQL
-- functions referencing distributed tables are not supported"): ai.distribute() makes it PL/pgSQL
-- there, planned per call, its query routed to the thread's shard.
-- Values: one primary-key probe per channel (LATERAL ... LIMIT 1), whatever the statistics say (a
-- join could scan every value of a long thread); a value stored as a delta comes back NULL (the
-- callers rebuild it: ai._whole_values). Writes: in (task_path, task_id, idx) order. Every probe
-- names the thread by the argument, not by the checkpoint row: on a formation the read is one
-- query to the one shard of the thread.
create or replace function ai._checkpoint_reads(a_thread_id text, a_ns text, a_upper text, a_below text,
                                                a_filter jsonb, a_max_rows integer)
returns setof ai.checkpoint_tuple
language sql stable
as $$
  select c.thread_id, c.checkpoint_ns::text, c.checkpoint_id::text, c.parent_checkpoint_id::text, c.type,
         c.checkpoint, c.metadata, c.channel_versions, c.created_at,
         bl.channels, bl.types, bl.blobs,
         w.task_ids, w.task_paths, w.idxs, w.channels, w.types, w.blobs
  from (select * from ai.checkpoints c
        where c.thread_id = a_thread_id and c.checkpoint_ns = a_ns and c.checkpoint_id <= a_upper
          and (a_below is null or c.checkpoint_id < a_below)
          and (a_filter is null or c.metadata @> a_filter)
        -- the whole key, so the plan is a backward probe of it whatever the statistics (a generic plan
        -- on fresh statistics otherwise took a bitmap scan of the namespace: test_bounded_reads)
        order by c.thread_id desc, c.checkpoint_ns desc, c.checkpoint_id desc
        limit a_max_rows) c
  cross join lateral (
    select array_agg(b.channel::text) as channels, array_agg(b.type) as types,
           array_agg(case when b.base_version is null then b.blob end) as blobs  -- NULL: a delta, rebuilt by the caller
    from pg_catalog.jsonb_each_text(c.channel_versions) v
    cross join lateral (
      select b.channel, b.type, b.blob, b.base_version from ai.checkpoint_blobs b
      where b.thread_id = a_thread_id and b.checkpoint_ns = c.checkpoint_ns and b.channel = v.key and b.version = v.value
      limit 1
    ) b
  ) bl
  cross join lateral (
    select array_agg(x.task_id::text order by x.task_path, x.task_id, x.idx) as task_ids,
           array_agg(x.task_path::text order by x.task_path, x.task_id, x.idx) as task_paths,
           array_agg(x.idx order by x.task_path, x.task_id, x.idx) as idxs,
           array_agg(x.channel order by x.task_path, x.task_id, x.idx) as channels,
           array_agg(x.type order by x.task_path, x.task_id, x.idx) as types,
           array_agg(x.blob order by x.task_path, x.task_id, x.idx) as blobs
    from ai.checkpoint_writes x
    where x.thread_id = a_thread_id and x.checkpoint_ns = c.checkpoint_ns and x.checkpoint_id = c.checkpoint_id
  ) w
  order by c.checkpoint_id desc
$$;
comment on function ai._checkpoint_reads(text, text, text, text, jsonb, integer) is
  'Internal: one thread''s checkpoints with their values (a delta as NULL) and pending writes, newest first, for get_checkpoint and list_checkpoints (inlined into their queries on one server; PL/pgSQL on a Citus formation).';
revoke execute on function ai._checkpoint_reads(text, text, text, text, jsonb, integer) from public;

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
  t ai.checkpoint_tuple;
begin
  if a_thread_id is null or a_thread_id = '' or pg_catalog.char_length(a_thread_id) > 255 then
    perform ai._check_thread_id(a_thread_id);
  end if;
  if a_ns is null or pg_catalog.octet_length(a_ns) > 1024 then
    perform ai._check_checkpoint_ns(a_ns);
  end if;
  -- one backward probe of the primary key, the newest checkpoint's values and writes (ai._checkpoint_reads)
  for t in
  select * from ai._checkpoint_reads(a_thread_id, a_ns, v_bound, null, null, 1) r
  where a_checkpoint_id is null or r.checkpoint_id = a_checkpoint_id loop
    if pg_catalog.array_position(t.blobs, null) is not null then
      t.blobs := ai._whole_values(a_thread_id, t.checkpoint_ns, t.blob_channels, t.channel_versions, t.blobs);
    end if;
    return next t;
  end loop;
end
$$;
comment on function ai.get_checkpoint(text, text, text) is
  'One checkpoint with its channel values and pending writes, in one call: the given id, or the newest of the namespace when checkpoint_id is NULL. No row when there is none (or the thread is another tenant''s). AS002 bad argument.';

-- The general case of list_checkpoints (no thread, or no namespace): planned for the arguments
-- of each call, so the NULL branches fold away and the right index is used.
-- v0.1.0's list_checkpoints read every row when max_rows was NULL and had no cursor across threads.
drop function if exists ai.list_checkpoints(text, text, text, integer, jsonb);
drop function if exists ai._list_checkpoints_any(text, text, text, integer, jsonb);
-- Across threads or namespaces the order is (checkpoint_id, thread_id, checkpoint_ns) newest first,
-- and the cursor is the last row's three: checkpoint ids are the caller's and may repeat across
-- threads, so the id alone would skip or repeat rows at a page boundary.
create or replace function ai._list_checkpoints_any(thread_id text, checkpoint_ns text, before text, max_rows integer,
                                         metadata_filter jsonb, before_thread_id text, before_checkpoint_ns text)
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
  a_before_thread alias for $6;
  a_before_ns alias for $7;
  -- a variable, not the call: the plan then knows the owner and reads that owner's sessions only
  v_owner text := ai.current_owner();
  k record;
begin
  -- The page's keys first, then each checkpoint with its values and writes as get_checkpoint
  -- reads it: one query per row (a page is at most max_rows), each on the one shard of its thread
  -- on a Citus formation, where the keys are one query across the shards.
  if a_thread_id is null and not ai.sees_all_owners() then
    -- A tenant across its threads: its own sessions (agent_sessions_owner_created), then each
    -- thread's checkpoints by the primary key, so the cost grows with the tenant's own rows and
    -- never with another tenant's (the policy as a filter on a scan of every checkpoint would).
    for k in
    select c.thread_id, c.checkpoint_ns, c.checkpoint_id
    from (select c.* from ai.agent_sessions s
          cross join lateral (select * from ai.checkpoints c
                              where c.thread_id = s.thread_id
                                and (a_ns is null or c.checkpoint_ns = a_ns)
                                and (a_before is null or c.checkpoint_id < a_before
                                     or (a_before_thread is not null and c.checkpoint_id = a_before
                                         and (c.thread_id, c.checkpoint_ns) < (a_before_thread, coalesce(a_before_ns, ''))))
                                and (a_filter is null or c.metadata @> a_filter)
                              order by c.checkpoint_id desc, c.checkpoint_ns desc
                              limit a_max_rows) c
          where s.owner = v_owner
          order by c.checkpoint_id desc, c.thread_id desc, c.checkpoint_ns desc
          limit a_max_rows) c
    order by c.checkpoint_id desc, c.thread_id desc, c.checkpoint_ns desc loop
      return query select * from ai.get_checkpoint(k.thread_id, k.checkpoint_ns, k.checkpoint_id);
    end loop;
    return;
  end if;
  for k in
  select c.thread_id, c.checkpoint_ns, c.checkpoint_id from ai.checkpoints c
  where (a_thread_id is null or c.thread_id = a_thread_id)
    and (a_ns is null or c.checkpoint_ns = a_ns)
    and (a_before is null or c.checkpoint_id < a_before
         or (a_before_thread is not null and c.checkpoint_id = a_before
             and (c.thread_id, c.checkpoint_ns) < (a_before_thread, coalesce(a_before_ns, ''))))
    and (a_filter is null or c.metadata @> a_filter)
  order by c.checkpoint_id desc, c.thread_id desc, c.checkpoint_ns desc
  limit a_max_rows loop
    return query select * from ai.get_checkpoint(k.thread_id, k.checkpoint_ns, k.checkpoint_id);
  end loop;
end
$$;
comment on function ai._list_checkpoints_any(text, text, text, integer, jsonb, text, text) is 'Internal: list_checkpoints across threads or namespaces, planned per call.';

create or replace function ai.list_checkpoints(
  thread_id text,
  checkpoint_ns text default null,
  before text default null,
  max_rows integer default 100,
  metadata_filter jsonb default null,
  before_thread_id text default null,
  before_checkpoint_ns text default null
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
  a_filter alias for $5;
  a_before_thread alias for $6;
  a_before_ns alias for $7;
  -- NULL is the default page, not every row: a v0.1.0 caller's NULL gets one page
  v_max_rows integer := coalesce($4, 100);
  v_before text := coalesce(a_before, pg_catalog.chr(1114111));
  t ai.checkpoint_tuple;
begin
  if a_thread_id is not null then
    perform ai._check_thread_id(a_thread_id);
  end if;
  if a_ns is not null then
    perform ai._check_checkpoint_ns(a_ns);
  end if;
  perform ai._check_limit(v_max_rows, 'max_rows');
  if a_filter is not null then
    perform ai._check_document(a_filter, 'metadata_filter', must_be_object => true);
  end if;
  if (a_before_thread is not null or a_before_ns is not null) and a_before is null then
    raise exception using errcode = 'AS002', message = 'before_thread_id and before_checkpoint_ns continue from before, which is NULL';
  end if;
  if a_before_thread is not null then
    perform ai._check_thread_id(a_before_thread);
  end if;
  if a_before_ns is not null then
    perform ai._check_checkpoint_ns(a_before_ns);
  end if;
  if a_thread_id is null or a_ns is null then
    return query select * from ai._list_checkpoints_any(a_thread_id, a_ns, a_before, v_max_rows, a_filter,
                                                        a_before_thread, a_before_ns);
    return;
  end if;
  -- one thread, one namespace: a backward range scan of the primary key, newest first (the
  -- cursor's thread and namespace are this call's, so the id alone continues)
  for t in
  select * from ai._checkpoint_reads(a_thread_id, a_ns, v_before, v_before, a_filter, v_max_rows) loop
    if pg_catalog.array_position(t.blobs, null) is not null then
      t.blobs := ai._whole_values(a_thread_id, t.checkpoint_ns, t.blob_channels, t.channel_versions, t.blobs);
    end if;
    return next t;
  end loop;
end
$$;
comment on function ai.list_checkpoints(text, text, text, integer, jsonb, text, text) is
  'Checkpoints newest first (by checkpoint_id, then thread_id and checkpoint_ns), each with its channel values and pending writes: of one thread (NULL: every thread the caller sees; a tenant''s cost grows with its own rows only), one namespace (NULL: all), whose metadata contains metadata_filter (GIN index), at most max_rows (1 to 10000; NULL or omitted: 100). The next page: before, before_thread_id, before_checkpoint_ns = the last row''s checkpoint_id, thread_id, checkpoint_ns (before alone continues within one thread and namespace). AS002 bad argument, AS003 filter too large.';

-- The parent chain. Ids sort in time order and a parent is older than its child, so the
-- ancestors of X are found in ONE backward range scan of the thread's ids <= X, following the
-- parent pointer as rows stream by: linear in the rows read, however deep the chain. Rows of
-- other branches are skipped. Should a parent not be older than its child (ids brought by a
-- caller in no time order), the walk finishes with one primary-key probe per step.
drop function if exists ai.checkpoint_lineage(text, text, text, text);
create or replace function ai.checkpoint_lineage(
  thread_id text,
  checkpoint_id text,
  checkpoint_ns text default '',
  direction text default 'ancestors',
  max_rows integer default 1000
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
  a_max_rows alias for $5;
  v_want text := a_checkpoint_id;
  step ai.lineage_step;
  v_depth integer := 0;
  r record;
begin
  perform ai._check_thread_id(a_thread_id);
  perform ai._check_key(a_checkpoint_id, 'checkpoint_id');
  perform ai._check_checkpoint_ns(a_ns);
  if a_direction is null or a_direction not in ('ancestors', 'descendants') then
    raise exception using errcode = 'AS002',
      message = format('direction %s is not ancestors or descendants', coalesce(pg_catalog.quote_literal(a_direction), 'NULL'));
  end if;
  perform ai._check_limit(a_max_rows, 'max_rows');
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
    order by d.depth, d.checkpoint_id
    limit a_max_rows;
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
      exit when v_want is null or v_depth >= a_max_rows;
    end if;
  end loop;
  if v_depth >= a_max_rows then
    return;  -- the next page starts at the last row's parent
  end if;
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
    exit when v_depth >= a_max_rows;
  end loop;
end
$$;
comment on function ai.checkpoint_lineage(text, text, text, text, integer) is
  'The checkpoints (checkpoint_id, parent_checkpoint_id, depth, created_at, metadata) along the parent chain of one checkpoint: ''ancestors'' (default) from the checkpoint itself (depth 0) back to the root, in one index range scan; ''descendants'' forward through every branch (depth = distance, then checkpoint_id). Stays in one namespace. At most max_rows (1 to 10000, default 1000): the next page of ancestors starts at the last row''s parent_checkpoint_id; the next level of descendants at each of the last level''s checkpoints. AS001 unknown checkpoint (or another tenant''s), AS002 bad argument.';

drop function if exists ai.checkpoints_between(text, timestamptz, timestamptz);
create or replace function ai.checkpoints_between(thread_id text, from_time timestamptz, to_time timestamptz,
                                       max_rows integer default 1000, after_checkpoint_ns text default null,
                                       after_checkpoint_id text default null)
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
  a_max_rows alias for $4;
  a_after_ns alias for $5;
  a_after_id alias for $6;
  v_after_at timestamptz;
begin
  perform ai._check_thread_id(a_thread_id);
  if a_from is null or a_to is null then
    raise exception using errcode = 'AS002', message = 'from_time and to_time must not be NULL';
  end if;
  if a_from > a_to then
    raise exception using errcode = 'AS002', message = format('from_time %s is after to_time %s', a_from, a_to);
  end if;
  perform ai._check_limit(a_max_rows, 'max_rows');
  if (a_after_ns is null) <> (a_after_id is null) then
    raise exception using errcode = 'AS002', message = 'after_checkpoint_ns and after_checkpoint_id go together';
  end if;
  if a_after_id is not null then
    -- the cursor is the last row's key; its time is read back, so a caller passes ids only
    select c.created_at into v_after_at from ai.checkpoints c
    where c.thread_id = a_thread_id and c.checkpoint_ns = a_after_ns and c.checkpoint_id = a_after_id;
    if not found then
      raise exception using errcode = 'AS001',
        message = format('checkpoint %s of thread %s not found', a_after_id, a_thread_id);
    end if;
  end if;
  return query
  select c.checkpoint_ns::text, c.checkpoint_id::text, c.parent_checkpoint_id::text, c.created_at, c.metadata
  from ai.checkpoints c
  where c.thread_id = a_thread_id and c.created_at >= a_from and c.created_at < a_to
    and (a_after_id is null or (c.created_at, c.checkpoint_ns, c.checkpoint_id) > (v_after_at, a_after_ns, a_after_id))
  order by c.created_at, c.checkpoint_ns, c.checkpoint_id
  limit a_max_rows;
end
$$;
comment on function ai.checkpoints_between(text, timestamptz, timestamptz, integer, text, text) is
  'The checkpoints of a thread (all namespaces) saved in [from_time, to_time), oldest first (by created_at, checkpoint_ns, checkpoint_id): one range scan of the (thread_id, created_at) index, at most max_rows (1 to 10000, default 1000). The next page: after_checkpoint_ns, after_checkpoint_id = the last row''s. AS001 unknown cursor checkpoint, AS002 bad argument.';

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
  v_scan refcursor;
  v_scanning boolean := true;
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

  -- One walk, one block per ancestor. The next ancestor comes from one backward range scan while
  -- it lasts (rows that are not the parent wanted stream by); a parent not older than its child
  -- (ids in no time order) ends the scan, and from there each step is a primary-key probe.
  open v_scan for
    select c.checkpoint_id, c.parent_checkpoint_id, c.channel_versions, c.metadata
    from ai.checkpoints c
    where c.thread_id = a_thread_id and c.checkpoint_ns = a_ns and c.checkpoint_id <= v_want
    order by c.checkpoint_id desc;
  loop
    if v_scanning then
      fetch v_scan into r;
      if not found then
        v_scanning := false;
        close v_scan;
      elsif r.checkpoint_id <> v_want then
        continue;
      end if;
    end if;
    if not v_scanning then
      select c.checkpoint_id, c.parent_checkpoint_id, c.channel_versions, c.metadata into r
      from ai.checkpoints c
      where c.thread_id = a_thread_id and c.checkpoint_ns = a_ns and c.checkpoint_id = v_want;
      exit when not found;
    end if;
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
  if v_scanning then
    close v_scan;
  end if;
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
  v_depths integer[];
  v_ancestors text[];
  v_channels text[];
  v_kinds text[];
  v_versions text[];
  r record;
begin
  if a_thread_id is null or a_thread_id = '' or pg_catalog.char_length(a_thread_id) > 255 then
    perform ai._check_thread_id(a_thread_id);
  end if;
  if a_ns is null or pg_catalog.octet_length(a_ns) > 1024 then
    perform ai._check_checkpoint_ns(a_ns);
  end if;
  if v_id = '' or pg_catalog.octet_length(v_id) > 255 then
    perform ai._check_key(v_id, 'checkpoint_id');
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
  -- The walk first, then the rows it names in one query, then a seed stored as a delta rebuilt
  -- whole: each a query of its own, not functions called inside one query (on a Citus formation
  -- that query runs on the thread's shard, where a function may not query the formation again).
  select array_agg(w.depth), array_agg(w.ancestor_id), array_agg(w.channel), array_agg(w.seed_kind),
         array_agg(w.seed_version)
    into v_depths, v_ancestors, v_channels, v_kinds, v_versions
  from ai._delta_walk(a_thread_id, a_ns, v_id, a_channels) w;
  if v_depths is null then
    return;
  end if;
  for r in
  with walk as materialized (
    select * from rows from (pg_catalog.unnest(v_depths), pg_catalog.unnest(v_ancestors), pg_catalog.unnest(v_channels),
                             pg_catalog.unnest(v_kinds), pg_catalog.unnest(v_versions))
                  w(depth, ancestor_id, channel, seed_kind, seed_version)
  )
  select s.channel, s.kind, s.from_checkpoint_id, s.task_id, s.idx, s.type, s.blob, s.delta_version
  from (
    -- the seed first: a channel value row ...
    select w.channel, 'seed' as kind, w.ancestor_id as from_checkpoint_id, null::text as task_id, null::integer as idx,
           b.type, b.blob,  -- a delta's blob is rebuilt below
           case when b.base_version is not null then b.version end as delta_version,
           0 as part, 0 as depth, ''::text as task_path
    from walk w
    join ai.checkpoint_blobs b
      on b.thread_id = a_thread_id and b.checkpoint_ns = a_ns and b.channel = w.channel and b.version = w.seed_version
    where w.seed_kind = 'blob'
    union all
    -- ... or the checkpoint that may hold it inline
    select w.channel, 'checkpoint', w.ancestor_id, null, null, c.type, c.checkpoint, null, 0, 0, ''
    from walk w
    join ai.checkpoints c
      on c.thread_id = a_thread_id and c.checkpoint_ns = a_ns and c.checkpoint_id = w.ancestor_id
    where w.seed_kind = 'checkpoint'
    union all
    -- then the writes, oldest ancestor first, each step's in (task_path, task_id, idx) order
    select w.channel, 'write', w.ancestor_id, x.task_id::text, x.idx, x.type, x.blob, null, 1, w.depth, x.task_path::text
    from walk w
    join ai.checkpoint_writes x
      on x.thread_id = a_thread_id and x.checkpoint_ns = a_ns and x.checkpoint_id = w.ancestor_id
         and x.channel = w.channel
  ) s
  order by s.channel, s.part, s.depth desc, s.task_path, s.task_id, s.idx loop
    channel := r.channel;
    kind := r.kind;
    from_checkpoint_id := r.from_checkpoint_id;
    task_id := r.task_id;
    idx := r.idx;
    type := r.type;
    blob := case when r.delta_version is null then r.blob
                 else ai._rebuilt_value(a_thread_id, a_ns, r.channel, r.delta_version) end;
    return next;
  end loop;
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
  v_count integer := 0;
  r record;
begin
  -- Read from the source, written to the target a row at a time: on a Citus formation the two
  -- threads may live on different workers, and an INSERT ... SELECT between shards goes through
  -- COPY, which row level security refuses; a read and single-row inserts are each routed to the
  -- one shard of their thread. (One server runs the same statements.)
  for r in select c.* from ai.checkpoints c
           where c.thread_id = a_source
             and (a_ns is null or c.checkpoint_ns = a_ns)
             and (a_ids is null or c.checkpoint_id = any (a_ids)) loop
    insert into ai.checkpoints (thread_id, checkpoint_ns, checkpoint_id, owner, parent_checkpoint_id, type,
                                checkpoint, metadata, channel_versions, created_at)
    values (a_target, r.checkpoint_ns, r.checkpoint_id, a_owner, r.parent_checkpoint_id, r.type,
            r.checkpoint, r.metadata, r.channel_versions, r.created_at);
    v_count := v_count + 1;
  end loop;

  for r in select w.* from ai.checkpoint_writes w
           where w.thread_id = a_source
             and (a_ns is null or w.checkpoint_ns = a_ns)
             and (a_ids is null or w.checkpoint_id = any (a_ids)) loop
    insert into ai.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, owner, channel,
                                      type, blob, task_path)
    values (a_target, r.checkpoint_ns, r.checkpoint_id, r.task_id, r.idx, a_owner, r.channel, r.type, r.blob,
            r.task_path);
  end loop;

  -- the values the copied checkpoints name (the source's rows, copied as they are), and the
  -- versions their deltas extend
  for r in
  with recursive needed as (
    select distinct c.checkpoint_ns, v.key collate "C" as channel, v.value collate "C" as version
    from ai.checkpoints c
    cross join lateral pg_catalog.jsonb_each_text(c.channel_versions) v
    where c.thread_id = a_source
      and (a_ns is null or c.checkpoint_ns = a_ns)
      and (a_ids is null or c.checkpoint_id = any (a_ids))
    union
    select b.checkpoint_ns, b.channel, b.base_version
    from needed n
    join ai.checkpoint_blobs b
      on b.thread_id = a_source and b.checkpoint_ns = n.checkpoint_ns and b.channel = n.channel
         and b.version = n.version
    where b.base_version is not null
  )
  -- a value that names a write gets the write's bytes: the copy may not hold that write
  select b.checkpoint_ns, b.channel, b.version, b.type,
         coalesce(b.blob, (select w.blob from ai.checkpoint_writes w
                           where w.thread_id = a_source and w.checkpoint_ns = b.checkpoint_ns
                             and w.checkpoint_id = b.write_checkpoint_id and w.task_id = b.write_task_id
                             and w.idx = b.write_idx)) as blob,
         b.base_version, b.delta_depth
  from needed n
  join ai.checkpoint_blobs b
    on b.thread_id = a_source and b.checkpoint_ns = n.checkpoint_ns and b.channel = n.channel and b.version = n.version
  loop
    insert into ai.checkpoint_blobs (thread_id, checkpoint_ns, channel, version, owner, type, blob, base_version,
                                     delta_depth)
    values (a_target, r.checkpoint_ns, r.channel, r.version, a_owner, r.type, r.blob, r.base_version, r.delta_depth);
  end loop;
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
  r ai.turn_retrievals;
begin
  perform ai._check_thread_id(a_source);
  perform ai._check_key(a_checkpoint_id, 'checkpoint_id');
  perform ai._check_thread_id(v_target);
  perform ai._check_checkpoint_ns(a_ns);
  select array_agg(l.checkpoint_id) into v_ids
  from ai.checkpoint_lineage(a_source, a_checkpoint_id, a_ns, 'ancestors') l;  -- AS001 when unknown
  v_owner := ai._create_copy_session(a_source, v_target);
  -- The start event says where the fork began, beside its source (copied_from): ai.list_forks
  -- shows a run's forks with the checkpoint each started from.
  update ai.session_events e
  set payload = e.payload || pg_catalog.jsonb_build_object('from_checkpoint', a_checkpoint_id, 'checkpoint_ns', a_ns)
  where e.thread_id = v_target and e.kind = 'start';
  perform ai._copy_checkpoint_rows(a_source, v_target, v_owner, a_ns, v_ids);
  -- What the model was given up to the checkpoint (ai.turn_retrievals, made by the later change
  -- `retrievals`: PL/pgSQL resolves the table when this runs): the retrievals recorded at or before
  -- it was saved (the timeline rule of ai.trajectory), with their ids and keys. Not copied: the
  -- message log (the reference a replay on the fork is compared with), hidden marks and streams
  -- (they belong to messages), usage (billing of the source: a copy would charge its calls twice).
  -- docs/streams-usage-retrievals.md
  -- (a row at a time, as ai._copy_checkpoint_rows copies, for the same reason)
  for r in select t.* from ai.turn_retrievals t
           where t.thread_id = a_source
             and t.created_at <= (select c.created_at from ai.checkpoints c
                                  where c.thread_id = a_source and c.checkpoint_ns = a_ns and c.checkpoint_id = a_checkpoint_id) loop
    insert into ai.turn_retrievals (thread_id, retrieval_id, owner, turn, idempotency_key, documents, created_at)
    overriding system value
    values (v_target, r.retrieval_id, v_owner, r.turn, r.idempotency_key, r.documents, r.created_at);
  end loop;
  return v_target;
end
$$;
comment on function ai.fork_thread(text, text, text, text) is
  'Copies one checkpoint and its ancestors (with their pending writes and channel values) into a new thread of the same owner, with the turn retrievals recorded at or before that checkpoint was saved (same ids and keys), so a replay can run from there without touching the source; its start event names the source and the checkpoint (copied_from, from_checkpoint: ai.list_forks); returns the new thread id (a fresh UUID when new_thread_id is NULL). Not copied: messages (and so hidden marks and streams: the source''s log, which a replay is compared with) and usage records (billing of the source: copying would charge its calls twice). AS001 unknown thread or checkpoint, AS002 bad argument, AS005 new_thread_id taken.';

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
  v_owners text[];
begin
  perform ai._check_thread_id(a_thread_id);
  -- The session row first (locked here, deleted by the tombstone's trigger in this transaction):
  -- a concurrent put waits on it, then finds the tombstone.
  select s.owner into v_owner from ai.agent_sessions s where s.thread_id = a_thread_id for update;
  if not found then
    -- unknown, or another tenant's: nothing the caller may delete. But jobs of the caller's own
    -- tombstoned thread are finished off: where the queue and the thread's node commit apart (a
    -- Citus formation whose queue tables lack ai.distribute()'s two-phase trigger, docs/scaling.md)
    -- a coordinator crash between the two keeps the tombstone and loses the delete of the jobs; a
    -- second call deletes them.
    select pg_catalog.array_agg(d.owner) into v_owners from ai.deleted_threads d where d.thread_id = a_thread_id;
    if v_owners is not null then
      delete from ai.agent_jobs j where j.thread_id = a_thread_id and j.owner = any (v_owners);
      delete from ai.agent_jobs_archive j where j.thread_id = a_thread_id and j.owner = any (v_owners);
    end if;
    return false;
  end if;
  -- The thread's jobs, by name: on one server the foreign key would cascade to them from the
  -- session, but on a Citus formation the jobs are on the coordinator, the session on a shard,
  -- and no foreign key joins them (docs/scaling.md). After the session's lock, as the cascade
  -- took them.
  delete from ai.agent_jobs j where j.thread_id = a_thread_id and j.owner = v_owner;
  delete from ai.agent_jobs_archive j where j.thread_id = a_thread_id and j.owner = v_owner;
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
  v_id text;
  -- the runs' metadata, {"run_id": ...} each, built once: Citus applies no STABLE function
  -- (jsonb_build_object) to a column in a DELETE of a distributed table
  v_runs jsonb[];
begin
  if run_ids is null or array_position(run_ids, null) is not null then
    raise exception using errcode = 'AS002', message = 'run_ids must not be NULL or contain NULL';
  end if;
  perform ai._check_deletes_at_read_committed('delete_for_runs');
  if pg_catalog.cardinality(run_ids) = 0 then
    return 0;
  end if;
  -- The threads of these runs, their sessions locked as ai.prune_checkpoints does (so puts in
  -- flight on them finish first and are seen below); only those threads are deleted from.
  v_runs := (select pg_catalog.array_agg(pg_catalog.jsonb_build_object('run_id', r.run_id))
             from pg_catalog.unnest(run_ids) as r(run_id));
  select pg_catalog.array_agg(distinct c.thread_id) into v_threads
  from ai.checkpoints c
  where c.metadata @> any (v_runs);
  if v_threads is null then
    return 0;
  end if;
  -- one session at a time, in id order (on a Citus formation a query across shards takes no lock)
  foreach v_id in array (select pg_catalog.array_agg(t.id order by t.id) from pg_catalog.unnest(v_threads) t(id)) loop
    perform from ai.agent_sessions s where s.thread_id = v_id for update;
  end loop;
  perform ai._unname_writes(v_threads, run_ids);
  with gone as (
    delete from ai.checkpoints c
    where c.metadata @> any (v_runs) and c.thread_id = any (v_threads)
    returning c.thread_id, c.checkpoint_ns, c.checkpoint_id
  ), gone_writes as (
    delete from ai.checkpoint_writes w
    using gone g
    where w.thread_id = g.thread_id and w.checkpoint_ns = g.checkpoint_ns and w.checkpoint_id = g.checkpoint_id
  )
  select array_agg(distinct g.thread_id), count(*) into v_threads, v_count from gone g;
  if v_count > 0 then
    -- a thread at a time: Citus runs a recursive CTE on one shard only
    foreach v_id in array v_threads loop
      perform ai._collect_checkpoint_blobs(array[v_id]);
    end loop;
  end if;
  return v_count;
end
$$;
comment on function ai.delete_for_runs(text[]) is
  'Deletes the checkpoints whose metadata run_id is one of run_ids (in every thread the caller sees), with their pending writes and the channel values no remaining checkpoint uses (or extends); locks those threads'' sessions first, so it waits for checkpoints being written to them. Returns the checkpoints deleted. AS002 bad argument, AS062 called in a repeatable read or serializable transaction.';

-- One thread of ai.prune_checkpoints. The session first, as ai.delete_thread: a put holds its
-- session (for key share) from before it checks a delta's base until it commits, so this waits for
-- every put in flight on the thread, and every statement below sees its checkpoints and values; a
-- put that comes later waits for this one and then finds the versions it would extend gone (AS061:
-- sent whole). So no delta outlives its base, and every surviving checkpoint stays readable.
-- Every statement names the thread, and what a query would get by calling a function of the
-- thread's rows (the delta walk, a rebuilt value) is computed first, here: on a Citus formation
-- each statement runs on the thread's shard alone (issue 40), and one server runs the same.
create or replace function ai._prune_thread(thread_id text, strategy text) returns integer
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  v_count integer;
  v_kept jsonb := '{}'::jsonb;  -- {namespace: {checkpoint id: true}}: the checkpoints kept
  v_channels text[];
  v_key text;
  v_blob bytea;
  l record;
  r record;
begin
  perform from ai.agent_sessions s where s.thread_id = a_thread_id for update;
  if strategy = 'delete' then
    delete from ai.checkpoint_writes w where w.thread_id = a_thread_id;
    delete from ai.checkpoint_blobs b where b.thread_id = a_thread_id;
    delete from ai.checkpoints c where c.thread_id = a_thread_id;
    get diagnostics v_count = row_count;
    return v_count;
  end if;
  perform ai._unname_writes(array[a_thread_id], null);
  -- Keep the newest checkpoint of each namespace with its writes and the values it names; and,
  -- for each DeltaChannel whose value it does not store (the channels its metadata counts in
  -- counters_since_delta_snapshot), the ancestors that value is rebuilt from, back to the nearest
  -- stored one (ai._delta_walk), with their writes.
  for l in select distinct on (c.checkpoint_ns) c.checkpoint_ns, c.checkpoint_id, c.metadata, c.channel_versions
           from ai.checkpoints c
           where c.thread_id = a_thread_id
           order by c.checkpoint_ns, c.checkpoint_id desc loop
    v_kept := v_kept || pg_catalog.jsonb_build_object(l.checkpoint_ns, pg_catalog.jsonb_build_object(l.checkpoint_id, true));
    if pg_catalog.jsonb_typeof(l.metadata -> 'counters_since_delta_snapshot') = 'object' then
      v_channels := '{}';
      for v_key in select pg_catalog.jsonb_object_keys(l.metadata -> 'counters_since_delta_snapshot') loop
        if not exists (select from ai.checkpoint_blobs b
                       where b.thread_id = a_thread_id and b.checkpoint_ns = l.checkpoint_ns
                         and b.channel = v_key and b.version = l.channel_versions ->> v_key) then
          v_channels := v_channels || v_key;
        end if;
      end loop;
      for r in select w.ancestor_id from ai._delta_walk(a_thread_id, l.checkpoint_ns, l.checkpoint_id, v_channels) w loop
        v_kept := pg_catalog.jsonb_set(v_kept, array[l.checkpoint_ns::text],
                                       (v_kept -> l.checkpoint_ns) || pg_catalog.jsonb_build_object(r.ancestor_id, true));
      end loop;
    end if;
  end loop;
  -- the writes of the checkpoints that go, then those checkpoints
  delete from ai.checkpoint_writes w
  where w.thread_id = a_thread_id and not coalesce((v_kept -> w.checkpoint_ns) ? w.checkpoint_id, false)
    and exists (select from ai.checkpoints c where c.thread_id = a_thread_id and c.checkpoint_ns = w.checkpoint_ns
                  and c.checkpoint_id = w.checkpoint_id);
  delete from ai.checkpoints c
  where c.thread_id = a_thread_id and not coalesce((v_kept -> c.checkpoint_ns) ? c.checkpoint_id, false);
  get diagnostics v_count = row_count;
  -- a kept checkpoint whose parent is gone becomes a root
  update ai.checkpoints c set parent_checkpoint_id = null
  where c.thread_id = a_thread_id and c.parent_checkpoint_id is not null
    and not coalesce((v_kept -> c.checkpoint_ns) ? c.parent_checkpoint_id, false);
  -- the values the kept checkpoints name are made whole, so the versions their deltas extended
  -- go with the pruned checkpoints (prune leaves one value per kept version, as it finds it)
  for r in select b.checkpoint_ns, b.channel, b.version
           from ai.checkpoints c
           cross join lateral pg_catalog.jsonb_each_text(c.channel_versions) v
           join ai.checkpoint_blobs b
             on b.thread_id = a_thread_id and b.checkpoint_ns = c.checkpoint_ns and b.channel = v.key
                and b.version = v.value
           where c.thread_id = a_thread_id and b.base_version is not null loop
    v_blob := ai._rebuilt_value(a_thread_id, r.checkpoint_ns, r.channel, r.version);
    update ai.checkpoint_blobs b set blob = v_blob, base_version = null, delta_depth = 0
    where b.thread_id = a_thread_id and b.checkpoint_ns = r.checkpoint_ns and b.channel = r.channel
      and b.version = r.version;
  end loop;
  perform ai._collect_checkpoint_blobs(array[a_thread_id]);
  return v_count;
end
$$;
comment on function ai._prune_thread(text, text) is
  'Internal: ai.prune_checkpoints for one thread (its session locked first): delete removes every checkpoint, value and write; keep_latest keeps the newest checkpoint of each namespace and the ancestors its delta channels are rebuilt from. Returns the checkpoints removed.';

create or replace function ai.prune_checkpoints(thread_ids text[], strategy text default 'keep_latest') returns integer
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_count integer;
  v_id text;
begin
  if thread_ids is null or array_position(thread_ids, null) is not null then
    raise exception using errcode = 'AS002', message = 'thread_ids must not be NULL or contain NULL';
  end if;
  if strategy is null or strategy not in ('keep_latest', 'delete') then
    raise exception using errcode = 'AS002',
      message = format('strategy %s is not keep_latest or delete', coalesce(pg_catalog.quote_literal(strategy), 'NULL'));
  end if;
  perform ai._check_deletes_at_read_committed('prune_checkpoints');
  if pg_catalog.cardinality(thread_ids) = 0 then
    return 0;
  end if;
  -- One thread at a time (ai._prune_thread), in id order, so that two prunes lock in one order.
  v_count := 0;
  foreach v_id in array (select pg_catalog.array_agg(distinct t.id order by t.id) from pg_catalog.unnest(thread_ids) t(id)) loop
    v_count := v_count + ai._prune_thread(v_id, strategy);
  end loop;
  return v_count;
end
$$;
comment on function ai.prune_checkpoints(text[], text) is
  'Retention for the given threads: ''keep_latest'' keeps the newest checkpoint of each namespace (with its pending writes and channel values, a value stored as a delta made whole) and, for the LangGraph DeltaChannels whose value it does not store, the ancestors that value is rebuilt from (back to the nearest stored value, with their writes); the oldest kept checkpoint loses its parent. ''delete'' removes all checkpoints, writes and values. The sessions stay. Locks the threads'' sessions first, as ai.delete_thread: waits for checkpoints being written to them, so no surviving value loses the version it extends. Returns the checkpoints deleted. AS002 bad argument, AS062 called in a repeatable read or serializable transaction (its snapshot would miss what runs committed meanwhile).';

-- Retention by age walks the caller's sessions newest first in batches, a keyset on
-- (created_at, thread_id): a plain LIMIT on threads to prune would never finish (a thread pruned
-- with keep_latest stays idle, so the same threads would come back first every time). A tenant's
-- walk reads its own sessions (agent_sessions_owner_created), a service's every session
-- (agent_sessions_created); each batch is one transaction, and ai.prune_all_idle_threads commits
-- between them.
drop function if exists ai.prune_idle_threads(interval, text);
create or replace function ai.prune_idle_threads(idle interval, strategy text default 'keep_latest',
                                      max_threads integer default 1000, after_thread_id text default null)
returns table (pruned integer, next_thread_id text)
language plpgsql volatile
-- planned per call: the caller decides the index (a tenant's own rows, or every owner's); a
-- generic plan would guess an average owner's share and read the other tenants' rows
set plan_cache_mode = force_custom_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_idle alias for $1;
  a_strategy alias for $2;
  a_max_threads alias for $3;
  a_after alias for $4;
  v_cutoff timestamptz;
  v_after_at timestamptz;
  v_batch text[];
  v_threads text[];
  v_seen integer;
  v_last text;
  v_owner text := ai.current_owner();  -- a variable: the plan knows the owner
begin
  if a_idle is null or a_idle < interval '0' then
    raise exception using errcode = 'AS002', message = 'idle must be a non-negative interval';
  end if;
  if a_strategy is null or a_strategy not in ('keep_latest', 'delete') then
    raise exception using errcode = 'AS002',
      message = format('strategy %s is not keep_latest or delete', coalesce(pg_catalog.quote_literal(a_strategy), 'NULL'));
  end if;
  perform ai._check_limit(a_max_threads, 'max_threads');
  if a_after is not null then
    perform ai._check_thread_id(a_after);
    select s.created_at into v_after_at from ai.agent_sessions s where s.thread_id = a_after;
    if not found then
      raise exception using errcode = 'AS001', message = format('session %s not found', a_after);
    end if;
  end if;
  v_cutoff := ai.now() - a_idle;
  -- idle = no checkpoint newer than the cutoff (newest per thread: one backward probe of the index)
  if ai.sees_all_owners() then
    select pg_catalog.array_agg(s.thread_id order by s.created_at desc, s.thread_id desc) into v_batch
    from (select s.thread_id, s.created_at from ai.agent_sessions s
          where a_after is null or (s.created_at, s.thread_id) < (v_after_at, a_after)
          order by s.created_at desc, s.thread_id desc
          limit a_max_threads) s;
  else
    select pg_catalog.array_agg(s.thread_id order by s.created_at desc, s.thread_id desc) into v_batch
    from (select s.thread_id, s.created_at from ai.agent_sessions s
          where s.owner = v_owner
            and (a_after is null or (s.created_at, s.thread_id) < (v_after_at, a_after))
          order by s.created_at desc, s.thread_id desc
          limit a_max_threads) s;
  end if;
  -- (from the batch's sessions, not from the array: a Citus formation runs a lateral subquery on the
  -- shards when it is joined to a distributed table by the thread)
  select pg_catalog.array_agg(b.thread_id) into v_threads
  from ai.agent_sessions b
  cross join lateral (select max(c.created_at) as newest from ai.checkpoints c where c.thread_id = b.thread_id) n
  where b.thread_id = any (v_batch) and n.newest < v_cutoff;
  v_seen := coalesce(pg_catalog.cardinality(v_batch), 0);
  if v_seen > 0 then
    v_last := v_batch[v_seen];
  end if;
  if v_threads is not null then
    perform ai.prune_checkpoints(v_threads, a_strategy);
  end if;
  return query select coalesce(pg_catalog.cardinality(v_threads), 0),
                      case when v_seen = a_max_threads then v_last end;
end
$$;
comment on function ai.prune_idle_threads(interval, text, integer, text) is
  'Retention by age, one bounded batch: of the next max_threads sessions the caller sees (newest first, after after_thread_id; 1 to 10000, default 1000), prunes (ai.prune_checkpoints with the given strategy) those whose newest checkpoint is older than now - idle. Returns how many threads it pruned and next_thread_id, the after_thread_id of the next batch (NULL: the walk is done). ai.prune_all_idle_threads walks every batch, committing each. AS001 unknown cursor session, AS002 bad argument, AS062 a prune in a repeatable read or serializable transaction.';

-- The whole walk, one transaction per batch: a batch's session locks (ai.prune_checkpoints takes
-- them before it deletes) and its dead rows end with its COMMIT, so a writer of a pruned thread
-- goes on while later batches run, and vacuum can reclaim what a batch deleted. Each committed
-- batch reports its cursor in a NOTICE; a walk stopped midway (cancelled, a lost connection)
-- resumes with after_thread_id => that cursor instead of walking the pruned sessions again.
-- No SET clause: PostgreSQL refuses COMMIT in a procedure that has one (the first version had
-- one, so every CALL failed at its first COMMIT). It is not SECURITY DEFINER and calls only the
-- pinned ai.prune_idle_threads, every name qualified.
drop procedure if exists ai.prune_all_idle_threads(interval, text, integer);
create or replace procedure ai.prune_all_idle_threads(idle interval, strategy text default 'keep_latest',
                                           batch_size integer default 1000, after_thread_id text default null)
language plpgsql
as $$
declare
  v_next text := after_thread_id;
  v_pruned integer;
begin
  loop
    select b.pruned, b.next_thread_id into v_pruned, v_next
    from ai.prune_idle_threads(idle, strategy, batch_size, v_next) b;
    commit;  -- one transaction per batch: its locks and its dead rows end with it
    if v_next is null then
      raise notice 'prune_all_idle_threads: % threads pruned in the last batch, the walk is done', v_pruned;
      exit;
    end if;
    raise notice 'prune_all_idle_threads: % threads pruned in a committed batch, next after_thread_id %', v_pruned, v_next;
  end loop;
end
$$;
comment on procedure ai.prune_all_idle_threads(interval, text, integer, text) is
  'Retention by age over every session the caller sees: ai.prune_idle_threads batch after batch of batch_size sessions (after after_thread_id when given), committing each, so a batch''s locks and dead rows end with it. Each committed batch raises a NOTICE naming the next after_thread_id: a walk stopped midway resumes from it. CALL it outside a transaction block (e.g. from cron or pg_cron). AS001 unknown cursor session, AS002 bad argument.';

-- The 0.1.0 fence of put_checkpoint and put_writes (both-or-neither, no thread check) gave way
-- to ai._fence(thread_id, job_id, fencing_token), the one guard of every write made for a job
-- (deploy/sessions_functions.sql); this change's revert brings it back with the 0.1.0 bodies.
-- Dropped after its callers are replaced above.
drop function if exists ai._fence(bigint, bigint);

revoke execute on function
  ai._check_key(text, text, integer), ai._check_checkpoint_ns(text), ai._check_blob_sizes(bytea, text[], text[], bytea[]),
  ai._checkpoint_thread_owner(text), ai._collect_checkpoint_blobs(text[]), ai._rebuilt_value(text, text, text, text),
  ai._insert_writes(text, text, text, text, text, text, integer[], text[], text[], bytea[]),
  ai._check_writes(text, text, integer[], text[], text[], bytea[]),
  ai._check_step(text, text, text, text, text, bytea, jsonb, jsonb, ai.checkpoint_values, ai.task_writes, text),
  ai._check_checkpoint_values(bytea, ai.checkpoint_values),
  ai._create_copy_session(text, text), ai._copy_checkpoint_rows(text, text, text, text, text[]),
  ai.put_checkpoint(text, text, text, text, text, bytea, jsonb, jsonb, ai.checkpoint_values, ai.task_writes, jsonb, ai.step_commit),
  ai.put_writes(text, text, text, text, integer[], text[], text[], bytea[], text, bigint, bigint),
  ai._whole_values(text, text, text[], jsonb, bytea[]), ai._list_checkpoints_any(text, text, text, integer, jsonb, text, text),
  ai.get_checkpoint(text, text, text), ai.list_checkpoints(text, text, text, integer, jsonb, text, text),
  ai.checkpoint_lineage(text, text, text, text, integer), ai.checkpoints_between(text, timestamptz, timestamptz, integer, text, text),
  ai.fork_thread(text, text, text, text), ai.copy_thread(text, text), ai.delete_thread(text),
  ai.delete_for_runs(text[]), ai.prune_checkpoints(text[], text), ai._prune_thread(text, text),
  ai.prune_idle_threads(interval, text, integer, text)
from public;
revoke execute on procedure ai.prune_all_idle_threads(interval, text, integer, text) from public;
grant execute on function
  ai.put_checkpoint(text, text, text, text, text, bytea, jsonb, jsonb, ai.checkpoint_values, ai.task_writes, jsonb, ai.step_commit),
  ai.put_writes(text, text, text, text, integer[], text[], text[], bytea[], text, bigint, bigint),
  ai.get_checkpoint(text, text, text), ai.list_checkpoints(text, text, text, integer, jsonb, text, text),
  ai.checkpoint_lineage(text, text, text, text, integer), ai.checkpoints_between(text, timestamptz, timestamptz, integer, text, text),
  ai.fork_thread(text, text, text, text), ai.copy_thread(text, text), ai.delete_thread(text),
  ai.delete_for_runs(text[]), ai.prune_checkpoints(text[], text), ai.prune_idle_threads(interval, text, integer, text)
to ai_user, ai_service;
grant execute on procedure ai.prune_all_idle_threads(interval, text, integer, text) to ai_user, ai_service;

commit;
