-- Deploy agent-state:operator_reads_functions to pg
-- Reworked after v0.1.0; the tagged script is deploy/operator_reads_functions@v0.1.0.sql.
-- requires: operator_reads
-- requires: queue
-- requires: checkpoints
-- requires: side_effects
-- requires: retention
--
-- The functions and triggers of operator reads (its tables, indexes and row rules:
-- deploy/operator_reads.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework operator_reads_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

-- The arguments every job list checks: a row limit, a job status, a queue name.
create or replace function ai._check_job_list(queue text, status text, max_rows integer)
returns void
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
begin
  perform ai._check_limit(max_rows, 'max_rows');
  if status is not null
     and status not in ('PENDING', 'IN_PROGRESS', 'AWAITING_HUMAN', 'COMPLETED', 'FAILED', 'CANCELLED') then
    raise exception using errcode = 'AS002',
      message = format('status %s is not PENDING, IN_PROGRESS, AWAITING_HUMAN, COMPLETED, FAILED or CANCELLED',
                       quote_literal(status));
  end if;
  if queue is not null then
    perform ai._check_text(queue, 'queue');
  end if;
end
$$;
comment on function ai._check_job_list(text, text, integer) is 'Internal guard of ai.list_jobs and ai.find_jobs: raises AS002 for a bad max_rows, job status or queue name.';
revoke execute on function ai._check_job_list(text, text, integer) from public;

-- The runs page's filters, checked once for both lists: an age is a positive interval, a metadata
-- path 1 to 16 non-empty keys with a value to compare.
create or replace function ai._check_run_filters(younger_than interval, meta_path text[], meta_value text)
returns void
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
begin
  if younger_than is not null and younger_than <= interval '0' then
    raise exception using errcode = 'AS002',
      message = format('younger_than must be a positive interval, not %s', younger_than);
  end if;
  if meta_path is null and meta_value is null then
    return;
  end if;
  if meta_path is null or meta_value is null or pg_catalog.cardinality(meta_path) not between 1 and 16
     or array_position(meta_path, null) is not null or '' = any (meta_path) then
    raise exception using errcode = 'AS002',
      message = 'meta_path (1 to 16 non-empty keys) and meta_value go together';
  end if;
  perform ai._check_text(meta_value, 'meta_value', 1000);
end
$$;
comment on function ai._check_run_filters(interval, text[], text) is 'Internal guard of ai.find_jobs and ai.find_sessions: raises AS002 for a non-positive younger_than, or a meta_path (1 to 16 non-empty keys) without a meta_value (at most 1000 characters) or the other way round.';
revoke execute on function ai._check_run_filters(interval, text[], text) from public;

-- Jobs of every thread, with the runs page's filters in the query (ai.list_jobs calls it without
-- them). A tenant's call (or an operator's naming an owner) reads that owner's sessions
-- (agent_sessions_owner_created) and, through each, that thread's jobs newest first
-- (agent_jobs_thread): what it costs grows with the owner's own rows, never with another
-- tenant's (a scan newest job first over the whole table with the policy as a filter would read
-- every newer job of every tenant before it found one of the caller's). A service acting for
-- nobody and naming no owner walks the primary key backwards. A filter that few jobs match reads on past the ones it skips until it has a page: what
-- a page costs grows with the jobs it skips, never past the owner's own on a tenant's call.
create or replace function ai.find_jobs(queue text default null, status text default null, owner text default null,
                                        younger_than interval default null, meta_path text[] default null,
                                        meta_value text default null, max_rows integer default 100,
                                        before_job_id bigint default null)
returns setof ai.agent_jobs
language plpgsql stable
-- planned per call: the caller decides the index (a tenant's own rows, or every owner's)
set plan_cache_mode = force_custom_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_queue alias for $1;
  a_status alias for $2;
  a_owner alias for $3;
  a_younger alias for $4;
  a_path alias for $5;
  a_value alias for $6;
  a_max_rows alias for $7;
  v_before bigint := coalesce($8, 9223372036854775807);
  v_all boolean := ai.sees_all_owners();
  v_owner text := $3;
  v_since timestamptz := ai.now() - $4;
begin
  perform ai._check_job_list(a_queue, a_status, a_max_rows);
  if a_owner is not null then
    perform ai._check_text(a_owner, 'owner');
  end if;
  perform ai._check_run_filters(a_younger, a_path, a_value);
  if not v_all then
    if a_owner is not null and a_owner <> ai.current_owner() then
      return;  -- another tenant's jobs: none the caller may see (RLS would hide them as well)
    end if;
    v_owner := ai.current_owner();
  end if;
  if v_owner is not null then
    -- the owner's sessions read first, on their own (materialized): on a Citus formation they are
    -- on the shards and the jobs on the coordinator, which Citus joins only through a result read
    -- first (docs/scaling.md); on one server the same walk of agent_sessions_owner_created
    return query
    with mine as materialized (select s.thread_id from ai.agent_sessions s where s.owner = v_owner)
    select j.*
    from mine s
    cross join lateral (select * from ai.agent_jobs j
                        where j.thread_id = s.thread_id and j.job_id < v_before
                          and (a_queue is null or j.queue = a_queue) and (a_status is null or j.status = a_status)
                          and (a_younger is null or j.created_at >= v_since)
                          and (a_path is null or j.payload #>> a_path = a_value)
                        order by j.job_id desc
                        limit a_max_rows) j
    order by j.job_id desc
    limit a_max_rows;
  else
    return query
    select j.* from ai.agent_jobs j
    where j.job_id < v_before and (a_queue is null or j.queue = a_queue) and (a_status is null or j.status = a_status)
      and (a_younger is null or j.created_at >= v_since)
      and (a_path is null or j.payload #>> a_path = a_value)
    order by j.job_id desc
    limit a_max_rows;
  end if;
end
$$;
comment on function ai.find_jobs(text, text, text, interval, text[], text, integer, bigint) is
  'Jobs of the queue table newest first (by job_id), as ai.list_jobs lists them, of one queue, status and/or owner when given, created within younger_than of ai.now() when given, and whose payload holds meta_value at meta_path when given (payload #>> meta_path: a string as its text, any other JSON value as its JSON text); the filters apply before the limit, at most max_rows (1 to 10000, default 100); the next page: before_job_id = the last job_id of this one. RLS applies: a tenant lists its own (naming another owner lists nothing), a service acting for nobody every owner''s. AS002 bad argument.';
revoke execute on function ai.find_jobs(text, text, text, interval, text[], text, integer, bigint) from public;
grant execute on function ai.find_jobs(text, text, text, interval, text[], text, integer, bigint) to ai_user, ai_service;

-- find_sessions and list_sessions returned the table's row type before ai.session (issue 33): a
-- deploy over that version drops them first (CREATE OR REPLACE cannot change a return type);
-- over itself it drops nothing.
do $$
declare
  f pg_catalog.regprocedure;
begin
  for f in select p.oid::pg_catalog.regprocedure from pg_catalog.pg_proc p
           where p.pronamespace = 'ai'::pg_catalog.regnamespace and p.proname in ('find_sessions', 'list_sessions')
             and p.prorettype = 'ai.agent_sessions'::pg_catalog.regtype loop
    execute pg_catalog.format('drop function %s', f);
  end loop;
end
$$;

-- Sessions with the runs page's filters in the query (ai.list_sessions calls it without them).
create or replace function ai.find_sessions(status text default null, owner text default null,
                                            younger_than interval default null, meta_path text[] default null,
                                            meta_value text default null, max_rows integer default 100,
                                            before_thread_id text default null)
returns setof ai.session
language plpgsql stable
set plan_cache_mode = force_custom_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_status alias for $1;
  a_owner alias for $2;
  a_younger alias for $3;
  a_path alias for $4;
  a_value alias for $5;
  a_max_rows alias for $6;
  a_before alias for $7;
  v_before_at timestamptz;
  v_owner text := $2;
  v_since timestamptz := ai.now() - $3;
  s ai.agent_sessions;
begin
  perform ai._check_limit(a_max_rows, 'max_rows');
  if a_status is not null and a_status not in ('active', 'waiting', 'completed', 'failed', 'cancelled') then
    raise exception using errcode = 'AS002',
      message = format('status %s is not active, waiting, completed, failed or cancelled', quote_literal(a_status));
  end if;
  if a_owner is not null then
    perform ai._check_text(a_owner, 'owner');
  end if;
  perform ai._check_run_filters(a_younger, a_path, a_value);
  if not ai.sees_all_owners() then
    if a_owner is not null and a_owner <> ai.current_owner() then
      return;  -- another tenant's sessions: none the caller may see (RLS would hide them as well)
    end if;
    v_owner := ai.current_owner();  -- RLS shows a tenant its own: say so, so the owner's index serves
  end if;
  if a_before is not null then
    perform ai._check_thread_id(a_before);
    select s.created_at into v_before_at from ai.agent_sessions s where s.thread_id = a_before;
    if not found then
      raise exception using errcode = 'AS001', message = format('session %s not found', a_before);
    end if;
  end if;
  -- the page first, then each row as the reads return it: a row passed to a function inside the
  -- query would, on a Citus formation, reach the function on the shard as the shard's row type
  -- (ai.agent_sessions_<shard>), which no function takes; here ai._session_as_read gets the
  -- page's rows, as on one server (where the lateral call ran once per row all the same)
  for s in
  select * from ai.agent_sessions s
  where (a_status is null or s.status = a_status) and (v_owner is null or s.owner = v_owner)
    and (a_before is null or (s.created_at, s.thread_id) < (v_before_at, a_before))
    and (a_younger is null or s.created_at >= v_since)
    and (a_path is null or s.config #>> a_path = a_value)
  order by s.created_at desc, s.thread_id desc
  limit a_max_rows loop
    return next ai._session_as_read(s);
  end loop;
end
$$;
comment on function ai.find_sessions(text, text, interval, text[], text, integer, text) is
  'Sessions newest first (by created_at, then thread_id), as ai.list_sessions lists them, of one status and/or owner when given, created within younger_than of ai.now() when given, and whose config holds meta_value at meta_path when given (config #>> meta_path); the filters apply before the limit, at most max_rows (1 to 10000, default 100); the next page: before_thread_id = the last row''s thread_id. RLS applies: a tenant lists its own (naming another owner lists nothing), a service acting for nobody every owner''s. AS001 unknown cursor session, AS002 bad argument.';
revoke execute on function ai.find_sessions(text, text, interval, text[], text, integer, text) from public;
grant execute on function ai.find_sessions(text, text, interval, text[], text, integer, text) to ai_user, ai_service;

-- v0.1.0's list_sessions had no cursor; a v0.1.0 caller's three arguments resolve to this one.
drop function if exists ai.list_sessions(text, text, integer);
-- Newest first on (created_at, thread_id): a tenant's call walks agent_sessions_owner_created, a
-- service's agent_sessions_created; the cursor is the last row's thread_id, whose created_at is
-- read back, so the next page starts where this one ended however many sessions share a time.
create or replace function ai.list_sessions(status text default null, owner text default null, max_rows integer default 100,
                                 before_thread_id text default null)
returns setof ai.session
language plpgsql stable
-- planned per call: the caller decides the index (a tenant's own rows, or every owner's); a
-- generic plan would guess an average owner's share and read the other tenants' rows
set plan_cache_mode = force_custom_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  -- ai.find_sessions without the runs page's filters: one query, one set of checks
  return query select * from ai.find_sessions($1, $2, null, null, null, $3, $4);
end
$$;
comment on function ai.list_sessions(text, text, integer, text) is
  'Sessions newest first (by created_at, then thread_id; last_seq and current_checkpoint_id computed as get_session does), of one status and/or one owner when given, at most max_rows (1 to 10000, default 100); the next page: before_thread_id = the last row''s thread_id. RLS applies: a tenant lists its own, a service acting for nobody every owner''s. AS001 unknown cursor session, AS002 bad status, owner or max_rows.';

-- v0.1.0's list_jobs had no cursor; a v0.1.0 caller's four arguments resolve to this one.
drop function if exists ai.list_jobs(text, text, text, integer);
-- One thread's jobs by agent_jobs_thread; every thread's through ai.find_jobs (above: a tenant's
-- call reads its own sessions and their jobs, a service's the primary key backwards).
create or replace function ai.list_jobs(queue text default null, status text default null, thread_id text default null,
                             max_rows integer default 100, before_job_id bigint default null)
returns setof ai.agent_jobs
language plpgsql stable
-- planned per call: the caller decides the index (a tenant's own rows, or every owner's); a
-- generic plan would guess an average owner's share and read the other tenants' rows
set plan_cache_mode = force_custom_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_queue alias for $1;
  a_status alias for $2;
  a_thread_id alias for $3;
  a_max_rows alias for $4;
  a_before alias for $5;
begin
  if a_thread_id is null then
    -- every thread: ai.find_jobs without the runs page's filters (its two paths, a tenant's and a service's)
    return query select * from ai.find_jobs(a_queue, a_status, null, null, null, null, a_max_rows, a_before);
    return;
  end if;
  perform ai._check_job_list(a_queue, a_status, a_max_rows);
  perform ai._check_thread_id(a_thread_id);
  return query
  select j.* from ai.agent_jobs j
  where j.thread_id = a_thread_id and j.job_id < coalesce(a_before, 9223372036854775807)
    and (a_queue is null or j.queue = a_queue) and (a_status is null or j.status = a_status)
  order by j.job_id desc
  limit a_max_rows;
end
$$;
comment on function ai.list_jobs(text, text, text, integer, bigint) is
  'Jobs of the queue table newest first (by job_id), of one queue, status and/or thread when given, at most max_rows (1 to 10000, default 100); the next page: before_job_id = the last job_id of this one. Archived jobs (ai.archive_jobs) are not listed. RLS applies: a tenant lists its own (its cost grows with its own sessions and jobs only), a service acting for nobody every owner''s. AS002 bad argument.';

-- The timeline's cursor as the merge order's key (rank, n, k) from its item and ref, shared by
-- ai.session_timeline (after_...) and ai.session_timeline_newest (before_...): a job, message or
-- event is ranked by its number, a checkpoint or side effect by its key. `side` names the arguments
-- in the messages ('after' or 'before').
create or replace function ai._timeline_cursor(item text, ref text, side text,
                                               out rank integer, out n bigint, out k text)
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
begin
  rank := pg_catalog.array_position(array['job', 'message', 'checkpoint', 'event', 'side_effect'], item);
  n := 0;
  k := '';
  if rank is null then
    raise exception using errcode = 'AS002',
      message = format('%s_item %s is not job, message, checkpoint, event or side_effect', side, quote_literal(item));
  end if;
  if rank in (1, 2, 4) then
    if ref !~ '^[0-9]{1,18}$' then
      raise exception using errcode = 'AS002', message = format('%s_ref %s of a %s is not its number', side, quote_literal(ref), item);
    end if;
    n := ref::bigint;
  else
    k := ref;
  end if;
end
$$;
comment on function ai._timeline_cursor(text, text, text) is
  'Internal guard of ai.session_timeline and ai.session_timeline_newest: a cursor''s item and ref as the merge order''s (rank, n, k); raises AS002 for an unknown item or a job, message or event ref that is not its number.';
revoke execute on function ai._timeline_cursor(text, text, text) from public;

drop function if exists ai.session_timeline(text, integer);
-- The cursor is the last row's (created_at, item, ref): the merge order is (created_at, the item's
-- rank, its number, its key), and each source skips what the cursor has passed by its own index.
create or replace function ai.session_timeline(thread_id text, max_rows integer default 1000,
                                    after_created_at timestamptz default null, after_item text default null,
                                    after_ref text default null)
returns table (created_at timestamptz, item text, ref text, label text, detail jsonb)
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_max_rows alias for $2;
  a_after_at alias for $3;
  a_after_item alias for $4;
  a_after_ref alias for $5;
  -- the cursor as the merge order's key: (created_at, rank, n, k); no cursor: before everything
  c_at timestamptz := coalesce(a_after_at, '-infinity');
  c_rank integer := 0;
  c_n bigint := 0;
  c_k text := '';
begin
  perform ai._session_owner(a_thread_id);  -- AS002 bad id, AS001 unknown (or another tenant's)
  perform ai._check_limit(a_max_rows, 'max_rows');
  if (a_after_at is null) <> (a_after_item is null) or (a_after_at is null) <> (a_after_ref is null) then
    raise exception using errcode = 'AS002', message = 'after_created_at, after_item and after_ref go together';
  end if;
  if a_after_item is not null then
    select c.rank, c.n, c.k into c_rank, c_n, c_k from ai._timeline_cursor(a_after_item, a_after_ref, 'after') c;
  end if;
  -- Each source contributes at most max_rows of its oldest rows (by its own index), then the
  -- merged list is cut to max_rows; ties in time go jobs, messages, checkpoints, events, side effects.
  return query
  select t.created_at, t.item, t.ref, t.label, t.detail
  from (
    (select j.created_at, 'job'::text as item, j.job_id::text as ref, j.status as label,
            jsonb_build_object('queue', j.queue, 'attempts', j.attempts, 'max_attempts', j.max_attempts,
                               'last_error', j.last_error, 'finished_at', j.finished_at) as detail,
            1 as rank, j.job_id as n, ''::text as k
     from ai.agent_jobs j where j.thread_id = a_thread_id
       and (j.created_at, 1, j.job_id, ''::text) > (c_at, c_rank, c_n, c_k) order by j.job_id limit a_max_rows)
    union all
    (select m.created_at, 'message', m.seq::text, m.role,
            jsonb_build_object('role', m.role, 'content', m.content, 'turn', m.turn, 'token_count', m.token_count),
            2, m.seq, ''
     from ai.session_messages m where m.thread_id = a_thread_id
       and (m.created_at, 2, m.seq, ''::text) > (c_at, c_rank, c_n, c_k) order by m.seq limit a_max_rows)
    union all
    (select c.created_at, 'checkpoint', c.checkpoint_id::text, coalesce(c.metadata ->> 'source', ''),
            jsonb_build_object('checkpoint_ns', c.checkpoint_ns, 'parent_checkpoint_id', c.parent_checkpoint_id,
                               'metadata', c.metadata),
            3, 0::bigint, c.checkpoint_id::text
     from ai.checkpoints c where c.thread_id = a_thread_id
       and (c.created_at, 3, 0::bigint, c.checkpoint_id::text) > (c_at, c_rank, c_n, c_k)
     order by c.created_at, c.checkpoint_id limit a_max_rows)
    union all
    (select e.created_at, 'event', e.event_id::text, e.kind, e.payload, 4, e.event_id, ''
     from ai.session_events e where e.thread_id = a_thread_id
       and (e.created_at, 4, e.event_id, ''::text) > (c_at, c_rank, c_n, c_k) order by e.event_id limit a_max_rows)
    union all
    (select s.created_at, 'side_effect', s.idempotency_key, s.status,
            jsonb_build_object('request', s.request, 'result', s.result, 'attempt', s.attempt,
                               'takeovers', s.takeovers, 'job_id', s.job_id, 'finished_at', s.finished_at),
            5, 0::bigint, s.idempotency_key
     from ai.side_effects s where s.thread_id = a_thread_id
       and (s.created_at, 5, 0::bigint, s.idempotency_key) > (c_at, c_rank, c_n, c_k)
     order by s.created_at, s.idempotency_key limit a_max_rows)
  ) t
  order by t.created_at, t.rank, t.n, t.k
  limit a_max_rows;
end
$$;
comment on function ai.session_timeline(text, integer, timestamptz, text, text) is
  'One thread''s history oldest first, at most max_rows (1 to 10000, default 1000); the next page: after_created_at, after_item, after_ref = the last row''s created_at, item, ref: its jobs (ref job_id, label status), messages (seq, role), checkpoints of every namespace (checkpoint_id, metadata source), events (event_id, kind) and side effects (idempotency key, status), each with a detail document. AS001 unknown thread (or another tenant''s), AS002 bad argument.';

-- The run page and `agent-state show` open at the newest items (issue 32): the same merge as
-- ai.session_timeline, walked backwards. The cursor is the last row's (created_at, item, ref);
-- each source reads its newest rows before the cursor by its own index, at most max_rows each.
create or replace function ai.session_timeline_newest(thread_id text, max_rows integer default 100,
                                    before_created_at timestamptz default null, before_item text default null,
                                    before_ref text default null)
returns table (created_at timestamptz, item text, ref text, label text, detail jsonb)
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_max_rows alias for $2;
  a_before_at alias for $3;
  a_before_item alias for $4;
  a_before_ref alias for $5;
  -- the cursor as the merge order's key: (created_at, rank, n, k); no cursor: after everything
  c_at timestamptz := coalesce(a_before_at, 'infinity');
  c_rank integer := 6;
  c_n bigint := 0;
  c_k text := '';
begin
  perform ai._session_owner(a_thread_id);  -- AS002 bad id, AS001 unknown (or another tenant's)
  perform ai._check_limit(a_max_rows, 'max_rows');
  if (a_before_at is null) <> (a_before_item is null) or (a_before_at is null) <> (a_before_ref is null) then
    raise exception using errcode = 'AS002', message = 'before_created_at, before_item and before_ref go together';
  end if;
  if a_before_item is not null then
    select c.rank, c.n, c.k into c_rank, c_n, c_k from ai._timeline_cursor(a_before_item, a_before_ref, 'before') c;
  end if;
  return query
  select t.created_at, t.item, t.ref, t.label, t.detail
  from (
    (select j.created_at, 'job'::text as item, j.job_id::text as ref, j.status as label,
            jsonb_build_object('queue', j.queue, 'attempts', j.attempts, 'max_attempts', j.max_attempts,
                               'last_error', j.last_error, 'finished_at', j.finished_at) as detail,
            1 as rank, j.job_id as n, ''::text as k
     from ai.agent_jobs j where j.thread_id = a_thread_id
       and (j.created_at, 1, j.job_id, ''::text) < (c_at, c_rank, c_n, c_k) order by j.job_id desc limit a_max_rows)
    union all
    (select m.created_at, 'message', m.seq::text, m.role,
            jsonb_build_object('role', m.role, 'content', m.content, 'turn', m.turn, 'token_count', m.token_count),
            2, m.seq, ''
     from ai.session_messages m where m.thread_id = a_thread_id
       and (m.created_at, 2, m.seq, ''::text) < (c_at, c_rank, c_n, c_k) order by m.seq desc limit a_max_rows)
    union all
    (select c.created_at, 'checkpoint', c.checkpoint_id::text, coalesce(c.metadata ->> 'source', ''),
            jsonb_build_object('checkpoint_ns', c.checkpoint_ns, 'parent_checkpoint_id', c.parent_checkpoint_id,
                               'metadata', c.metadata),
            3, 0::bigint, c.checkpoint_id::text
     from ai.checkpoints c where c.thread_id = a_thread_id
       and (c.created_at, 3, 0::bigint, c.checkpoint_id::text) < (c_at, c_rank, c_n, c_k)
     order by c.created_at desc, c.checkpoint_id desc limit a_max_rows)
    union all
    (select e.created_at, 'event', e.event_id::text, e.kind, e.payload, 4, e.event_id, ''
     from ai.session_events e where e.thread_id = a_thread_id
       and (e.created_at, 4, e.event_id, ''::text) < (c_at, c_rank, c_n, c_k) order by e.event_id desc limit a_max_rows)
    union all
    (select s.created_at, 'side_effect', s.idempotency_key, s.status,
            jsonb_build_object('request', s.request, 'result', s.result, 'attempt', s.attempt,
                               'takeovers', s.takeovers, 'job_id', s.job_id, 'finished_at', s.finished_at),
            5, 0::bigint, s.idempotency_key
     from ai.side_effects s where s.thread_id = a_thread_id
       and (s.created_at, 5, 0::bigint, s.idempotency_key) < (c_at, c_rank, c_n, c_k)
     order by s.created_at desc, s.idempotency_key desc limit a_max_rows)
  ) t
  order by t.created_at desc, t.rank desc, t.n desc, t.k desc
  limit a_max_rows;
end
$$;
comment on function ai.session_timeline_newest(text, integer, timestamptz, text, text) is
  'One thread''s history newest first, as ai.session_timeline merges it (the same rows, the other way), at most max_rows (1 to 10000, default 100); the next (older) page: before_created_at, before_item, before_ref = the last row''s created_at, item, ref; ai.session_timeline_total counts every item. AS001 unknown thread (or another tenant''s), AS002 bad argument (a cursor whose three parts are not all given, an item that is not job, message, checkpoint, event or side_effect, a job, message or event ref that is not its number).';

-- How many items ai.session_timeline lists for a thread (the pager's "n of N"): five index counts.
create or replace function ai.session_timeline_total(thread_id text)
returns bigint
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
begin
  perform ai._session_owner(a_thread_id);  -- AS002 bad id, AS001 unknown (or another tenant's)
  return (select count(*) from ai.agent_jobs j where j.thread_id = a_thread_id)
       + (select count(*) from ai.session_messages m where m.thread_id = a_thread_id)
       + (select count(*) from ai.checkpoints c where c.thread_id = a_thread_id)
       + (select count(*) from ai.session_events e where e.thread_id = a_thread_id)
       + (select count(*) from ai.side_effects s where s.thread_id = a_thread_id);
end
$$;
comment on function ai.session_timeline_total(text) is
  'How many items ai.session_timeline and ai.session_timeline_newest list for a thread in all (jobs, messages, checkpoints of every namespace, events, side effects). AS001 unknown thread (or another tenant''s), AS002 bad id.';

-- A thread's run status from its jobs (issue 32: a finished run's session still reads "active"),
-- for a page of threads in one call: each thread's jobs by agent_jobs_thread. A job running beats
-- one waiting for a person, which beats one queued; otherwise the newest job's end says it.
-- RLS applies: another tenant's thread (or an unknown one) has no row.
create or replace function ai.thread_run_status(thread_ids text[])
returns table (thread_id text, run_status text, jobs bigint, latest_job_id bigint, latest_job_status text)
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_ids alias for $1;
begin
  if a_ids is null or pg_catalog.cardinality(a_ids) > 10000 then
    raise exception using errcode = 'AS002', message = 'thread_ids is an array of at most 10000 thread ids';
  end if;
  return query
  select t.id, case when r.running then 'running' when r.waiting then 'waiting'
                    when r.queued then 'queued'
                    else pg_catalog.lower(r.last_status) end,
         r.jobs, r.last_job, r.last_status
  from (select distinct u.id from pg_catalog.unnest(a_ids) as u(id) where u.id is not null) t
  cross join lateral (
    select count(*) as jobs,
           bool_or(j.status = 'IN_PROGRESS') as running,
           bool_or(j.status = 'AWAITING_HUMAN') as waiting,
           bool_or(j.status = 'PENDING') as queued,
           max(j.job_id) as last_job,
           (pg_catalog.array_agg(j.status order by j.job_id desc))[1] as last_status
    from ai.agent_jobs j where j.thread_id = t.id
  ) r
  where r.jobs > 0
  order by t.id;
end
$$;
comment on function ai.thread_run_status(text[]) is
  'The run status of each thread of a page (at most 10000 ids) from its jobs: running (a job IN_PROGRESS), waiting (one AWAITING_HUMAN: a person decides), queued (one PENDING), else the newest job''s end: completed, failed or cancelled; with how many jobs the thread has and its newest job. A thread without jobs (archived, unknown, or another tenant''s: RLS applies) has no row. AS002 bad argument.';

-- Which node wrote each checkpoint (issue 32: checkpoints named by their node). LangGraph 1.x no
-- longer puts `writes` in the metadata; the tasks that ran from a checkpoint store their pending
-- writes under it with their task path ('~__pregel_pull, <node>'), and their step's checkpoint is
-- that checkpoint's child: so a checkpoint's nodes are the tasks whose writes hang off its parent.
create or replace function ai.checkpoint_nodes(thread_id text, checkpoint_ns text, checkpoint_ids text[])
returns table (checkpoint_id text, nodes text[], interrupted boolean)
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_ns alias for $2;
  a_ids alias for $3;
begin
  perform ai._session_owner(a_thread_id);  -- AS002 bad id, AS001 unknown (or another tenant's)
  if a_ns is null or a_ids is null or pg_catalog.cardinality(a_ids) > 10000 then
    raise exception using errcode = 'AS002', message = 'checkpoint_ns and checkpoint_ids (at most 10000) are needed';
  end if;
  return query
  select c.checkpoint_id::text,
         (select pg_catalog.array_agg(distinct case when w.task_path like '~\_\_pregel\_pull, %'
                                                    then pg_catalog.substr(w.task_path, 17) else w.task_path end)
          from ai.checkpoint_writes w
          where w.thread_id = a_thread_id and w.checkpoint_ns = a_ns and w.checkpoint_id = c.parent_checkpoint_id
            and w.task_path <> '' and w.idx >= 0),
         exists (select from ai.checkpoint_writes w
                 where w.thread_id = a_thread_id and w.checkpoint_ns = a_ns and w.checkpoint_id = c.checkpoint_id
                   and w.channel = '__interrupt__')
  from ai.checkpoints c
  where c.thread_id = a_thread_id and c.checkpoint_ns = a_ns and c.checkpoint_id = any (a_ids)
  order by c.checkpoint_id;
end
$$;
comment on function ai.checkpoint_nodes(text, text, text[]) is
  'For each named checkpoint of a thread''s namespace (at most 10000 ids): the nodes whose step wrote it (the tasks whose pending writes hang off its parent, by their task path; NULL for a root or when the writes are gone) and whether the graph paused there (a pending write on __interrupt__). Unknown ids have no row. AS001 unknown thread (or another tenant''s), AS002 bad argument.';

drop function if exists ai.checkpoint_tree(text, text, integer);
create or replace function ai.checkpoint_tree(thread_id text, checkpoint_ns text default '', max_rows integer default 1000,
                                   before_checkpoint_id text default null)
returns table (checkpoint_id text, parent_checkpoint_id text, created_at timestamptz, metadata jsonb, is_current boolean)
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_ns alias for $2;
  a_max_rows alias for $3;
  a_before alias for $4;
  v_current text;
begin
  perform ai._session_owner(a_thread_id);
  perform ai._check_checkpoint_ns(a_ns);
  perform ai._check_limit(a_max_rows, 'max_rows');
  -- the newest root checkpoint (computed: the session row does not hold it)
  select c.checkpoint_id into v_current from ai.checkpoints c
  where c.thread_id = a_thread_id and c.checkpoint_ns = '' order by c.checkpoint_id desc limit 1;
  return query
  select c.checkpoint_id::text, c.parent_checkpoint_id::text, c.created_at, c.metadata,
         (a_ns = '' and c.checkpoint_id = v_current)
  from (select x.checkpoint_id, x.parent_checkpoint_id, x.created_at, x.metadata
        from ai.checkpoints x
        where x.thread_id = a_thread_id and x.checkpoint_ns = a_ns
          and (a_before is null or x.checkpoint_id < a_before)
        order by x.checkpoint_id desc
        limit a_max_rows) c
  order by c.checkpoint_id;
end
$$;
comment on function ai.checkpoint_tree(text, text, integer, text) is
  'Every checkpoint of one namespace of a thread (the newest max_rows, 1 to 10000, default 1000, older than before_checkpoint_id when given: the next page back is before_checkpoint_id = the first row''s checkpoint_id), oldest first, with its parent: the tree of branches a client draws. is_current marks the session''s current checkpoint (root namespace). A parent outside the rows returned (older, or pruned) is still named. AS001 unknown thread (or another tenant''s), AS002 bad argument.';

create or replace function ai.archive_backlog(older_than interval default '90 days', jobs_older_than interval default '1 day')
returns table (sessions bigint, jobs bigint)
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_older_than alias for $1;
  a_jobs_older_than alias for $2;
  v_now timestamptz := ai.now();
begin
  if a_older_than is null or a_older_than < interval '0' or a_jobs_older_than is null or a_jobs_older_than < interval '0' then
    raise exception using errcode = 'AS002',
      message = format('older_than and jobs_older_than must be non-negative intervals, not %s and %s',
                       coalesce(a_older_than::text, 'NULL'), coalesce(a_jobs_older_than::text, 'NULL'));
  end if;
  -- The same conditions as ai.archive_sessions and ai.archive_jobs.
  return query
  select (select count(*) from ai.agent_sessions s
          where s.completed_at is not null and s.completed_at < v_now - a_older_than),
         (select count(*) from ai.agent_jobs j
          where j.status in ('COMPLETED', 'FAILED', 'CANCELLED') and j.finished_at <= v_now - a_jobs_older_than);
end
$$;
comment on function ai.archive_backlog(interval, interval) is
  'How many finished sessions ai.archive_sessions(older_than) and finished jobs ai.archive_jobs(jobs_older_than) would move now (a progress bar''s total, a monitoring gauge). For ai_service. AS002 bad interval.';

-- The workers, from their registry (ai.queue_workers, deploy/queue_workers_registry.sql) and their
-- leases: every worker that registered (an idle one too) or holds a running job, what it holds
-- (its IN_PROGRESS jobs with a lease that has not ended, their threads), its queue, when it started
-- and was last heard from, and its state:
-- * alive: it keeps a liveness hold and the hold is held now (pg_locks: its connection is open);
--   or, a worker without a hold (behind a transaction pooler, a claim by hand), it was heard from
--   within stale_after, or holds a lease that has not ended;
-- * stale: it took a hold and the hold is free (its process died or its connection was cut: a claim
--   takes its jobs over), or, without a hold, it was not heard from within stale_after;
-- * stopped: it gave its hold up cleanly (ai.release_worker_liveness) and was not heard from since.
-- Its holdings span tenants: for ai_service only (a tenant has no grant).
drop function if exists ai.list_workers(integer);
drop function if exists ai.list_workers(integer, text);
create or replace function ai.list_workers(max_rows integer default 100, after_worker text default null,
                                           stale_after interval default '1 minute')
returns table (worker text, state text, queue text, jobs bigint, thread_ids text[], job_ids bigint[],
               heard_at timestamptz, started_at timestamptz, stopped_at timestamptz, client_addr text,
               liveness_held boolean, last_renewed_at timestamptz, lease_expires_at timestamptz)
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_max_rows alias for $1;
  a_after alias for $2;
  a_stale alias for $3;
  v_now timestamptz := ai.now();
  v_held bigint[];
begin
  perform ai._check_limit(a_max_rows, 'max_rows');
  if a_stale is null or a_stale <= interval '0' then
    raise exception using errcode = 'AS002', message = pg_catalog.format('list_workers: stale_after must be above 0, not %s',
      coalesce(a_stale::text, 'NULL'));
  end if;
  -- the liveness holds held now (deploy/queue_functions.sql, "Dead workers": two-key advisory locks)
  select coalesce(pg_catalog.array_agg(l.objid::bigint), '{}'::bigint[]) into v_held
  from pg_catalog.pg_locks l
  where l.locktype = 'advisory' and l.granted and l.mode = 'ExclusiveLock' and l.objsubid = 2
    and l.database = (select d.oid from pg_catalog.pg_database d where d.datname = pg_catalog.current_database())
    and l.classid = ai._liveness_class()::oid;
  return query
  with leases as (
    select j.lease_owner as worker, count(*) as jobs,
           pg_catalog.array_agg(distinct j.thread_id) as thread_ids,
           pg_catalog.array_agg(j.job_id order by j.job_id) as job_ids,
           max(j.updated_at) as last_renewed_at, min(j.lease_expires_at) as lease_expires_at
    from ai.agent_jobs j
    where j.status = 'IN_PROGRESS' and j.available_at is not null and j.lease_expires_at > v_now
      and (a_after is null or j.lease_owner > a_after)
    group by j.lease_owner
  ), registry as (
    select w.worker_id, w.live, w.queue, w.seen_at, w.started_at, w.stopped_at, w.client_addr,
           w.live and pg_catalog.hashtext(w.worker_id)::oid::bigint = any (v_held) as held
    from ai.queue_workers w
    where a_after is null or w.worker_id > a_after
  )
  select coalesce(r.worker_id, l.worker),
         case when r.worker_id is null then 'alive'
              when r.stopped_at is not null and not r.live and r.seen_at <= r.stopped_at and l.worker is null then 'stopped'
              when r.live then case when r.held then 'alive' else 'stale' end
              when r.seen_at >= v_now - a_stale or l.worker is not null then 'alive'
              else 'stale' end,
         r.queue, coalesce(l.jobs, 0), coalesce(l.thread_ids, '{}'::text[]), coalesce(l.job_ids, '{}'::bigint[]),
         greatest(r.seen_at, l.last_renewed_at), r.started_at, r.stopped_at, r.client_addr, coalesce(r.held, false),
         l.last_renewed_at, l.lease_expires_at
  from registry r
  full join leases l on l.worker = r.worker_id
  order by 1
  limit a_max_rows;
end
$$;
comment on function ai.list_workers(integer, text, interval) is
  'The workers, from their registry (ai.queue_workers) and their leases, idle ones included: per worker, its state (alive: its liveness hold is held now, or, without a hold, heard from within stale_after (default 1 minute) or holding a lease; stale: its hold is free (its process or connection is gone) or, without one, silent for stale_after; stopped: gave its hold up cleanly), the queue of its last claim, the IN_PROGRESS jobs it holds with a lease that has not ended (how many, their job and thread ids), when it was last heard from (its claims, empty ones included, and renewals, to 5 seconds), started and stopped, the address of its liveness connection, whether its hold is held, its last renewal and the soonest of its lease ends; by worker id, at most max_rows (1 to 10000, default 100); the next page: after_worker = the last row''s worker. For ai_service only (holdings span tenants). AS002 bad max_rows or stale_after.';
revoke execute on function ai.list_workers(integer, text, interval) from public;
grant execute on function ai.list_workers(integer, text, interval) to ai_service;

revoke execute on function ai.list_sessions(text, text, integer, text), ai.list_jobs(text, text, text, integer, bigint),
  ai.session_timeline(text, integer, timestamptz, text, text),
  ai.session_timeline_newest(text, integer, timestamptz, text, text), ai.session_timeline_total(text), ai.thread_run_status(text[]), ai.checkpoint_nodes(text, text, text[]), ai.checkpoint_tree(text, text, integer, text), ai.archive_backlog(interval, interval)
from public;
grant execute on function ai.list_sessions(text, text, integer, text), ai.list_jobs(text, text, text, integer, bigint),
  ai.session_timeline(text, integer, timestamptz, text, text),
  ai.session_timeline_newest(text, integer, timestamptz, text, text), ai.session_timeline_total(text), ai.thread_run_status(text[]), ai.checkpoint_nodes(text, text, text[]), ai.checkpoint_tree(text, text, integer, text)
to ai_user, ai_service;
grant execute on function ai.archive_backlog(interval, interval) to ai_service;

commit;
