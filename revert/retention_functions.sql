-- Deploy agent-state:retention_functions to pg
-- requires: retention
--
-- The functions and triggers of retention (its tables, indexes and row rules:
-- deploy/retention.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework retention_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

drop function ai.archive_skips(integer, text);
drop function ai._archive_threads(text[]);
drop function ai._lock_finished_sessions(text[], timestamptz);
-- returns ai.session since (issue 33); 0.1.0's returns the table's row type
drop function ai.restore_session(text);

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
  v_counts jsonb := '[]'::jsonb;
  v_table record;
  v_step jsonb;
begin
  if older_than is null or older_than < interval '0' then
    raise exception using errcode = 'AS002',
      message = format('older_than must be a non-negative interval, not %s', coalesce(older_than::text, 'NULL'));
  end if;
  perform ai._check_limit(batch_size, 'batch_size');
  v_cutoff := ai.now() - older_than;

  -- Oldest first; a session someone holds is skipped, not waited for.
  select pg_catalog.array_agg(picked.thread_id) into v_ids
  from (select s.thread_id from ai.agent_sessions s
        where s.completed_at is not null and s.completed_at < v_cutoff
        order by s.completed_at
        limit batch_size
        for update skip locked) picked;
  if v_ids is null then
    return;
  end if;

  insert into ai_archive.agent_sessions select * from ai.agent_sessions s where s.thread_id = any (v_ids);
  for v_table in select a.table_name, ai._copy_columns(a.table_name, true) as columns
                 from ai._archived_tables a order by a.copy_order loop
    execute format($q$
      with copied as (insert into ai_archive.%I (%s) select %s from ai.%I where thread_id = any ($1) returning thread_id)
      select coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('thread_id', c.thread_id, 'tab', %L, 'n', c.n)), '[]')
      from (select thread_id, count(*) as n from copied group by thread_id) c$q$,
      v_table.table_name, v_table.columns, v_table.columns, v_table.table_name, v_table.table_name)
    into v_step using v_ids;
    v_counts := v_counts || v_step;
  end loop;
  -- The copies are in; the cascade removes the hot rows of every registered table.
  delete from ai.agent_sessions s where s.thread_id = any (v_ids);

  return query
    select a.thread_id, a.owner, a.status, a.completed_at,
           coalesce((select pg_catalog.jsonb_object_agg(c.tab, c.n)
                     from pg_catalog.jsonb_to_recordset(v_counts) as c(thread_id text, tab text, n bigint)
                     where c.thread_id = a.thread_id), '{}')
    from ai_archive.agent_sessions a
    where a.thread_id = any (v_ids)
    order by a.completed_at, a.thread_id;
end
$$;
comment on function ai.archive_sessions(interval, integer) is
  'Moves up to batch_size finished sessions (completed, failed or cancelled before now - older_than), oldest first, with every row that hangs off them, into ai_archive, and returns them with the rows moved per table. One batch per call, in the caller''s transaction: call it until it returns nothing (or call ai.archive_all_sessions). Skips sessions someone holds. For ai_service. AS002 bad argument.';

create or replace function ai.restore_session(thread_id text) returns ai.agent_sessions
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  v_table record;
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
  for v_table in select a.table_name, a.order_by, ai._copy_columns(a.table_name, false) as columns
                 from ai._archived_tables a order by a.copy_order loop
    -- In the thread's own order, so that messages come back 1, 2, 3, ... as the seq guard wants.
    execute format('insert into ai.%I (%s) overriding system value select %s from ai_archive.%I where thread_id = $1 order by %I',
                   v_table.table_name, v_table.columns, v_table.columns, v_table.table_name, v_table.order_by)
    using a_thread_id;
  end loop;
  delete from ai_archive.agent_sessions a where a.thread_id = a_thread_id;
  return s;
end
$$;
comment on function ai.restore_session(text) is
  'Moves one archived session, with everything archived with it, back into the hot tables (byte for byte) so it can be read or replayed, and returns it. For ai_service. AS001 not in the archive (or another tenant''s), AS041 a hot session with that id exists.';

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

revoke execute on function ai._copy_columns(text, boolean), ai.archive_sessions(interval, integer), ai.restore_session(text) from public;
-- internal helpers (ai._*): no EXECUTE grant; only the schema owner's functions call them
revoke execute on procedure ai.archive_all_sessions(interval, integer) from public;
grant execute on function ai.archive_sessions(interval, integer), ai.restore_session(text) to ai_service;
grant execute on procedure ai.archive_all_sessions(interval, integer) to ai_service;

commit;
