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
    return query
    select j.*
    from ai.agent_sessions s
    cross join lateral (select * from ai.agent_jobs j
                        where j.thread_id = s.thread_id and j.job_id < v_before
                          and (a_queue is null or j.queue = a_queue) and (a_status is null or j.status = a_status)
                          and (a_younger is null or j.created_at >= v_since)
                          and (a_path is null or j.payload #>> a_path = a_value)
                        order by j.job_id desc
                        limit a_max_rows) j
    where s.owner = v_owner
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
  return query
  select r.* from ai.agent_sessions s, lateral ai._session_as_read(s) r
  where (a_status is null or s.status = a_status) and (v_owner is null or s.owner = v_owner)
    and (a_before is null or (s.created_at, s.thread_id) < (v_before_at, a_before))
    and (a_younger is null or s.created_at >= v_since)
    and (a_path is null or s.config #>> a_path = a_value)
  order by s.created_at desc, s.thread_id desc
  limit a_max_rows;
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
    c_rank := pg_catalog.array_position(array['job', 'message', 'checkpoint', 'event', 'side_effect'], a_after_item);
    if c_rank is null then
      raise exception using errcode = 'AS002',
        message = format('after_item %s is not job, message, checkpoint, event or side_effect', quote_literal(a_after_item));
    end if;
    if c_rank in (1, 2, 4) then
      if a_after_ref !~ '^[0-9]{1,18}$' then
        raise exception using errcode = 'AS002', message = format('after_ref %s of a %s is not its number', quote_literal(a_after_ref), a_after_item);
      end if;
      c_n := a_after_ref::bigint;
    else
      c_k := a_after_ref;
    end if;
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

-- The workers alive, by their renewals: a worker holds IN_PROGRESS jobs whose lease it renewed
-- (updated_at) and which has not ended. Reads the claim index's IN_PROGRESS entries only.
drop function if exists ai.list_workers(integer);
create or replace function ai.list_workers(max_rows integer default 100, after_worker text default null)
returns table (worker text, jobs bigint, last_renewed_at timestamptz, lease_expires_at timestamptz)
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_max_rows alias for $1;
  a_after alias for $2;
  v_now timestamptz := ai.now();
begin
  perform ai._check_limit(a_max_rows, 'max_rows');
  return query
  select j.lease_owner, count(*), max(j.updated_at), min(j.lease_expires_at)
  from ai.agent_jobs j
  where j.status = 'IN_PROGRESS' and j.available_at is not null and j.lease_expires_at > v_now
    and (a_after is null or j.lease_owner > a_after)
  group by j.lease_owner
  order by j.lease_owner
  limit a_max_rows;
end
$$;
comment on function ai.list_workers(integer, text) is
  'The workers alive now, by their leases: each worker id holding IN_PROGRESS jobs whose lease has not ended, how many, when it last claimed or renewed one (updated_at) and the soonest of their lease ends; by worker id, at most max_rows (1 to 10000, default 100); the next page: after_worker = the last row''s worker. For ai_service (agent-state status). AS002 bad max_rows.';
revoke execute on function ai.list_workers(integer, text) from public;
grant execute on function ai.list_workers(integer, text) to ai_service;

revoke execute on function ai.list_sessions(text, text, integer, text), ai.list_jobs(text, text, text, integer, bigint),
  ai.session_timeline(text, integer, timestamptz, text, text), ai.checkpoint_tree(text, text, integer, text), ai.archive_backlog(interval, interval)
from public;
grant execute on function ai.list_sessions(text, text, integer, text), ai.list_jobs(text, text, text, integer, bigint),
  ai.session_timeline(text, integer, timestamptz, text, text), ai.checkpoint_tree(text, text, integer, text)
to ai_user, ai_service;
grant execute on function ai.archive_backlog(interval, interval) to ai_service;

commit;
