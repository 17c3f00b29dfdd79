-- Deploy agent-state:retention_functions to pg
-- Reworked after v0.1.0; the tagged script is deploy/retention_functions@v0.1.0.sql.
-- requires: retention
--
-- The functions and triggers of retention (its tables, indexes and row rules:
-- deploy/retention.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework retention_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

-- The columns a copy names, of the hot table: all of them into the archive (where a generated
-- column is a plain one that keeps its value), the non-generated ones on the way back (the hot
-- table computes the others again). Named explicitly, so a column added later to both tables,
-- in any position, still lands in the right place.
create or replace function ai._copy_columns(table_name text, with_generated boolean) returns text
language sql stable
as $$
  select pg_catalog.string_agg(pg_catalog.quote_ident(a.attname), ', ' order by a.attnum)
  from pg_catalog.pg_attribute a
  where a.attrelid = pg_catalog.format('ai.%I', table_name)::regclass
    and a.attnum > 0 and not a.attisdropped and (with_generated or a.attgenerated = '')
$$;
comment on function ai._copy_columns(text, boolean) is 'Internal: the quoted, comma-separated columns of a table of schema ai, with or without generated ones.';

-- Moves the given sessions (locked by the caller) with every row that hangs off them into
-- ai_archive, reserves their ids, and returns the rows moved per thread and table. All or none: a
-- row that cannot be copied (a unique key of the archive taken) raises, and the caller's
-- exception block rolls this call back.
create or replace function ai._archive_threads(thread_ids text[]) returns jsonb
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_counts jsonb := '[]'::jsonb;
  v_table record;
  v_step jsonb;
begin
  insert into ai_archive.agent_sessions select * from ai.agent_sessions s where s.thread_id = any (thread_ids);
  -- The id stays taken while the session is archived (deploy/archive_conflicts.sql). Read from the
  -- sessions (locked: the same ids), so that on a Citus formation each shard copies its own.
  insert into ai_archive.archived_thread_ids (thread_id)
  select s.thread_id from ai.agent_sessions s where s.thread_id = any (thread_ids);
  for v_table in select a.table_name, ai._copy_columns(a.table_name, true) as columns
                 from ai._archived_tables a order by a.copy_order loop
    -- counted, then copied: two statements rather than a data-modifying CTE that counts what it
    -- copies, which Citus cannot run across shards (the sessions are locked: the rows stay as counted)
    execute format($q$
      select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('thread_id', c.thread_id, 'tab', %L, 'n', c.n)), '[]')
      from (select thread_id, count(*) as n from ai.%I where thread_id = any ($1) group by thread_id) c$q$,
      v_table.table_name, v_table.table_name)
    into v_step using thread_ids;
    execute format('insert into ai_archive.%I (%s) select %s from ai.%I where thread_id = any ($1)',
                   v_table.table_name, v_table.columns, v_table.columns, v_table.table_name)
    using thread_ids;
    v_counts := v_counts || v_step;
  end loop;
  -- The copies are in; the cascade removes the hot rows of every registered table. The queue's
  -- rows are deleted by name first: on a Citus formation they stay on the coordinator without a
  -- foreign key to the distributed sessions (ai.distribute()), and a hot job left behind would be
  -- claimed and run again (on one server the cascade then finds none).
  delete from ai.agent_jobs j where j.thread_id = any (thread_ids);
  delete from ai.agent_jobs_archive j where j.thread_id = any (thread_ids);
  delete from ai.agent_sessions s where s.thread_id = any (thread_ids);
  return v_counts;
end
$$;
comment on function ai._archive_threads(text[]) is
  'Internal: moves the given (locked) sessions and everything they own to ai_archive and reserves their ids; returns the rows moved as [{thread_id, tab, n}]. Raises, moving nothing, when a row cannot be copied.';

-- The candidates of an archive batch (ai.archive_sessions) that this call can take: each session
-- still finished before the cutoff, locked one at a time with SKIP LOCKED (a session someone holds
-- is left out, not waited for), in the candidates' order. One statement per session, each on the
-- one shard of its thread on a Citus formation (where a query across shards takes no row lock).
create or replace function ai._lock_finished_sessions(thread_ids text[], cutoff timestamptz) returns text[]
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_id text;
  v_locked text[] := '{}'::text[];
begin
  foreach v_id in array coalesce(thread_ids, '{}'::text[]) loop
    perform from ai.agent_sessions s
    where s.thread_id = v_id and s.completed_at is not null and s.completed_at < cutoff
    for update skip locked;
    if found then
      v_locked := v_locked || v_id;
    end if;
  end loop;
  return v_locked;
end
$$;
comment on function ai._lock_finished_sessions(text[], timestamptz) is
  'Internal: of the given sessions, those still finished before cutoff that no one else holds, each locked (FOR UPDATE SKIP LOCKED), in the given order.';

create or replace function ai.archive_sessions(older_than interval default '90 days', batch_size integer default 1000)
returns table (thread_id text, owner text, status text, completed_at timestamptz, rows_moved jsonb)
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_cutoff timestamptz;
  v_ids text[];
  v_more text[];
  v_moved text[] := '{}'::text[];
  v_id text;
  v_counts jsonb := '[]'::jsonb;
  v_state text;
  v_constraint text;
  v_message text;
  v_now timestamptz;
  v_row record;
begin
  if older_than is null or older_than < interval '0' then
    raise exception using errcode = 'AS002',
      message = format('older_than must be a non-negative interval, not %s', coalesce(older_than::text, 'NULL'));
  end if;
  perform ai._check_limit(batch_size, 'batch_size');
  v_cutoff := ai.now() - older_than;

  -- Oldest first; a session someone holds is skipped, not waited for. Sessions an earlier sweep
  -- could not move come last (ai_archive.archive_skips): they never crowd out the others, and a
  -- batch that moves nothing means nothing else is left. The candidates are read first, then each
  -- is locked on its own (ai._lock_finished_sessions): on a Citus formation the sessions are spread
  -- over the shards, where a query across shards may not lock rows (FOR UPDATE). A session another
  -- sweep holds is left out of the batch rather than replaced by the next one.
  select pg_catalog.array_agg(picked.thread_id) into v_ids
  from (select s.thread_id from ai.agent_sessions s
        where s.completed_at is not null and s.completed_at < v_cutoff
          and not exists (select from ai_archive.archive_skips k where k.thread_id = s.thread_id)
        order by s.completed_at
        limit batch_size) picked;
  v_ids := ai._lock_finished_sessions(v_ids, v_cutoff);
  if coalesce(pg_catalog.cardinality(v_ids), 0) < batch_size then
    select pg_catalog.array_agg(picked.thread_id) into v_more
    from (select s.thread_id from ai_archive.archive_skips k join ai.agent_sessions s on s.thread_id = k.thread_id
          where s.completed_at is not null and s.completed_at < v_cutoff
          order by k.last_skipped_at, s.thread_id
          limit batch_size - coalesce(pg_catalog.cardinality(v_ids), 0)) picked;
    v_ids := coalesce(v_ids, '{}') || coalesce(ai._lock_finished_sessions(v_more, v_cutoff), '{}');
  end if;
  -- Skips whose hot session is gone (deleted, or archived by a restore's round trip) leave the list.
  delete from ai_archive.archive_skips k
  where not exists (select from ai.agent_sessions s where s.thread_id = k.thread_id and s.owner = k.owner);
  if pg_catalog.cardinality(v_ids) = 0 then
    return;
  end if;

  -- The whole batch at once; when a row of it cannot be moved, each session on its own, so that
  -- one session that cannot move (an archived id re-created, a row breaking a unique key of the
  -- archive) stops no other: it is recorded, warned about and left hot.
  begin
    v_counts := ai._archive_threads(v_ids);
    v_moved := v_ids;
  exception when integrity_constraint_violation then
    foreach v_id in array v_ids loop
      begin
        v_counts := v_counts || ai._archive_threads(array[v_id]);
        v_moved := v_moved || v_id;
      exception when integrity_constraint_violation then
        get stacked diagnostics v_state = returned_sqlstate, v_constraint = constraint_name, v_message = message_text;
        -- a Citus worker's error carries no constraint name, and its message names the shard's
        -- constraint (the shard id appended): the table's own name, read from the message (one
        -- server always has the name, so nothing changes there)
        v_constraint := coalesce(nullif(v_constraint, ''), pg_catalog.substring(v_message, 'constraint "(.*)_[0-9]+"'));
        v_now := ai.now();  -- read first: not inside the INSERT ... SELECT a Citus shard runs (see hide_messages)
        insert into ai_archive.archive_skips as k
          (thread_id, owner, sqlstate, constraint_name, message, first_skipped_at, last_skipped_at)
        select s.thread_id, s.owner, v_state, nullif(v_constraint, ''), v_message, v_now, v_now
        from ai.agent_sessions s where s.thread_id = v_id
        on conflict (thread_id) do update
          set owner = excluded.owner, sqlstate = excluded.sqlstate, constraint_name = excluded.constraint_name,
              message = excluded.message, last_skipped_at = excluded.last_skipped_at, attempts = k.attempts + 1;
        raise warning using
          message = format('archive_sessions: session %s left hot: %s (SQLSTATE %s)', v_id, v_message, v_state),
          hint = 'ai.archive_skips() lists the sessions a sweep could not move (docs/operations.md, "Retention")';
      end;
    end loop;
  end;
  delete from ai_archive.archive_skips k where k.thread_id = any (v_moved);

  -- the moved sessions, then each one's counts (not a subquery of the counts inside the query,
  -- which Citus cannot send to the shards of the archived sessions)
  for v_row in select a.thread_id, a.owner, a.status, a.completed_at from ai_archive.agent_sessions a
               where a.thread_id = any (v_moved)
               order by a.completed_at, a.thread_id loop
    thread_id := v_row.thread_id;
    owner := v_row.owner;
    status := v_row.status;
    completed_at := v_row.completed_at;
    rows_moved := coalesce((select pg_catalog.jsonb_object_agg(c.tab, c.n)
                            from pg_catalog.jsonb_to_recordset(v_counts) as c(thread_id text, tab text, n bigint)
                            where c.thread_id = v_row.thread_id), '{}');
    return next;
  end loop;
end
$$;
comment on function ai.archive_sessions(interval, integer) is
  'Moves up to batch_size finished sessions (completed, failed or cancelled before now - older_than), oldest first, with every row that hangs off them, into ai_archive, and returns them with the rows moved per table; an archived id stays reserved until restored. One batch per call, in the caller''s transaction: call it until it returns nothing (or call ai.archive_all_sessions). Skips sessions someone holds. A session that cannot be moved (a row breaking a key of the archive) is left hot, listed by ai.archive_skips() with a WARNING, tried again last in later sweeps; the rest of the batch moves. For ai_service. AS002 bad argument.';

create or replace function ai.archive_skips(max_rows integer default 100, after_thread_id text default null)
returns table (thread_id text, owner text, sqlstate text, constraint_name text, message text,
               first_skipped_at timestamptz, last_skipped_at timestamptz, attempts integer)
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  perform ai._check_limit(coalesce(max_rows, 100), 'max_rows');
  return query
    select k.thread_id, k.owner, k.sqlstate, k.constraint_name, k.message, k.first_skipped_at, k.last_skipped_at, k.attempts
    from ai_archive.archive_skips k
    where after_thread_id is null or k.thread_id > after_thread_id
    order by k.thread_id
    limit coalesce(max_rows, 100);
end
$$;
comment on function ai.archive_skips(integer, text) is
  'The finished sessions ai.archive_sessions could not move, by thread id, at most max_rows (1 to 10000; NULL or omitted: 100), after after_thread_id (the last row''s, for the next page): thread, owner, the SQLSTATE, constraint and message of the last attempt, when first and last skipped, how many attempts. Each stays hot and is tried again last in every sweep. For ai_service. AS002 bad argument.';

-- 0.1.0's restore_session returned the table's row type: dropped first when it still does
-- (CREATE OR REPLACE cannot change a return type); a deploy over itself drops nothing.
do $$
begin
  if (select p.prorettype from pg_catalog.pg_proc p
      where p.oid = pg_catalog.to_regprocedure('ai.restore_session(text)')) = 'ai.agent_sessions'::pg_catalog.regtype then
    drop function ai.restore_session(text);
  end if;
end
$$;
create or replace function ai.restore_session(thread_id text) returns ai.session
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  v_table record;
  v_constraint text;
  v_message text;
  s ai.agent_sessions;
begin
  perform ai._check_thread_id(a_thread_id);
  perform from ai_archive.agent_sessions a where a.thread_id = a_thread_id for update;
  if not found then
    raise exception using errcode = 'AS001', message = format('archived thread %s not found', a_thread_id);
  end if;
  if exists (select from ai.agent_sessions h where h.thread_id = a_thread_id) then
    raise exception using errcode = 'AS041',
      message = format('thread %s exists among the hot sessions: it cannot be restored over them', a_thread_id);
  end if;

  -- A hot session of that id created meanwhile (not yet committed when checked above): the same
  -- refusal, not a unique violation (ON CONFLICT waits for it, as in ai._start_session).
  insert into ai.agent_sessions select * from ai_archive.agent_sessions a where a.thread_id = a_thread_id
  on conflict do nothing
  returning * into s;
  if not found then
    raise exception using errcode = 'AS041',
      message = format('thread %s exists among the hot sessions: it cannot be restored over them', a_thread_id);
  end if;
  begin
    for v_table in select a.table_name, a.order_by, ai._copy_columns(a.table_name, false) as columns
                   from ai._archived_tables a order by a.copy_order loop
      -- In the thread's own order, so that messages come back 1, 2, 3, ... as the seq guard wants.
      execute format('insert into ai.%I (%s) overriding system value select %s from ai_archive.%I where thread_id = $1 order by %I',
                     v_table.table_name, v_table.columns, v_table.columns, v_table.table_name, v_table.order_by)
      using a_thread_id;
    end loop;
  exception when unique_violation then
    -- A key of the hot tables that the owner took again meanwhile (a queue's idempotency key, the
    -- only one that is not the thread's: an archived job freed it): named, not a bare 23505.
    get stacked diagnostics v_constraint = constraint_name, v_message = message_text;
    raise exception using errcode = 'AS041',
      message = format('thread %s cannot be restored: %s', a_thread_id, v_message),
      detail = format('constraint %s', v_constraint),
      hint = 'the owner reused a key of the archived session since it was archived (docs/operations.md, "Retention")';
  end;
  delete from ai_archive.agent_sessions a where a.thread_id = a_thread_id;
  delete from ai_archive.archived_thread_ids r where r.thread_id = a_thread_id;  -- the id is free again
  -- A skip listed for this id was a hot duplicate that is gone now (a restore needs none): it
  -- would otherwise be reported by every later sweep until the restored session is archived.
  delete from ai_archive.archive_skips k where k.thread_id = a_thread_id;
  return ai._session_as_read(s);  -- last_seq and current_checkpoint_id computed, as get_session does
end
$$;
comment on function ai.restore_session(text) is
  'Moves one archived session, with everything archived with it, back into the hot tables (byte for byte) so it can be read or replayed, and returns it. For ai_service. AS001 not in the archive (or another tenant''s), AS041 a hot session with that id exists (an archived id stays reserved: only a duplicate made before 0.2.0 reserved them) or a row of the session takes a key the owner used again since (a queue idempotency key).';

create or replace procedure ai.archive_all_sessions(older_than interval default '90 days', batch_size integer default 1000)
language plpgsql
as $$
declare
  moved integer;
begin
  loop
    select count(*) into moved from ai.archive_sessions(older_than, batch_size);
    commit;  -- one transaction per batch: a crash loses at most the batch in flight, and it rolls back whole
    exit when moved = 0;
  end loop;
end
$$;
comment on procedure ai.archive_all_sessions(interval, integer) is
  'Archives every finished session older than older_than, one committed batch of batch_size at a time (CALL it outside a transaction block, e.g. from cron or pg_cron).';

revoke execute on function ai._copy_columns(text, boolean), ai._archive_threads(text[]), ai._lock_finished_sessions(text[], timestamptz), ai.archive_sessions(interval, integer),
  ai.archive_skips(integer, text), ai.restore_session(text) from public;
-- internal helpers (ai._*): no EXECUTE grant; only the schema owner's functions call them
revoke execute on procedure ai.archive_all_sessions(interval, integer) from public;
grant execute on function ai.archive_sessions(interval, integer), ai.archive_skips(integer, text), ai.restore_session(text) to ai_service;
grant execute on procedure ai.archive_all_sessions(interval, integer) to ai_service;

commit;
