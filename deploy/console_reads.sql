-- Deploy agent-state:console_reads to pg
-- requires: queue_functions
-- requires: streams_functions
--
-- The reads of the operator console (python/agent_state/console, docs/console.md) that no other
-- function gives: a run's forks (ai.list_forks, over the index of change fork_index), the counts
-- and the chart. The runs page's filtered lists (ai.find_jobs, ai.find_sessions) are beside
-- ai.list_jobs and ai.list_sessions, which call them (deploy/operator_reads_functions.sql). Functions only: CREATE OR REPLACE throughout, so this change deploys over itself
-- and, after a release, `sqitch rework console_reads` changes a function here.
begin;

-- A run's forks and copies, for its page: the threads whose start event names it as their source
-- (ai.fork_thread and ai.copy_thread write it), by the index of change fork_index.
create or replace function ai.list_forks(thread_id text, max_rows integer default 100, after_thread_id text default null)
returns table (fork_thread_id text, owner text, status text, created_at timestamptz, from_checkpoint_id text,
               replay_job_id bigint, replay_model text)
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_max_rows alias for $2;
  a_after alias for $3;
  v_after_at timestamptz;
begin
  perform ai._session_owner(a_thread_id);  -- AS002 bad id, AS001 unknown (or another tenant's)
  perform ai._check_limit(a_max_rows, 'max_rows');
  if a_after is not null then
    select e.created_at into v_after_at from ai.session_events e
    where e.thread_id = a_after and e.kind = 'start' and (e.payload ->> 'copied_from') = a_thread_id;
    if not found then
      raise exception using errcode = 'AS001', message = format('fork %s of thread %s not found', a_after, a_thread_id);
    end if;
  end if;
  -- the forks (events and sessions, one thread's rows each) read first, on their own
  -- (materialized), then each one's replay job: on a Citus formation the forks are on the shards
  -- and the jobs on the coordinator, which Citus joins only through a result read first
  return query
  with forks as materialized (
    select e.thread_id, s.owner, s.status, e.created_at, e.payload ->> 'from_checkpoint' as from_checkpoint
    from ai.session_events e
    join ai.agent_sessions s on s.thread_id = e.thread_id
    where e.kind = 'start' and (e.payload ->> 'copied_from') = a_thread_id
      and (a_after is null or (e.created_at, e.thread_id) > (v_after_at, a_after))
    order by e.created_at, e.thread_id
    limit a_max_rows
  )
  select f.thread_id, f.owner, f.status, f.created_at, f.from_checkpoint, r.job_id, r.model
  from forks f
  left join lateral (select j.job_id, j.payload -> 'replay' ->> 'model' as model from ai.agent_jobs j
                     where j.thread_id = f.thread_id and j.payload ? 'replay'
                     order by j.job_id limit 1) r on true
  order by f.created_at, f.thread_id;
end
$$;
comment on function ai.list_forks(text, integer, text) is
  'The threads made from one thread by ai.fork_thread (from_checkpoint_id: the checkpoint the fork starts from) or ai.copy_thread (from_checkpoint_id NULL), oldest first (by created_at, then fork_thread_id), at most max_rows (1 to 10000, default 100; the next page: after_thread_id = the last row''s fork_thread_id), with the first replay job enqueued on each (a job whose payload has a "replay" object, as the console''s replay enqueues: replay_job_id, replay_model). Forks archived with their sessions are not listed. AS001 unknown thread (or another tenant''s) or cursor fork, AS002 bad argument.';
revoke execute on function ai.list_forks(text, integer, text) from public;
grant execute on function ai.list_forks(text, integer, text) to ai_user, ai_service;

-- The queues page's chart: finished jobs of the hot table (ai.archive_jobs moves them out later)
-- per bucket, with the time from enqueue to finish. Reads every job finished within `since` (like
-- ai.queue_stats, a service's call scans the hot table: no index on finished_at, which would cost every finish).
create or replace function ai.queue_throughput(of_queue text default null, since interval default '1 hour',
                                               bucket interval default '5 minutes')
returns table (queue text, bucket_start timestamptz, completed bigint, failed bigint,
               mean_latency interval, max_latency interval)
language plpgsql stable
-- planned per call: the caller decides the index (a tenant's own rows, or every owner's); a
-- generic plan would guess an average owner's share and read the other tenants' rows
set plan_cache_mode = force_custom_plan
-- no parallel plan: a tenant's call gates the every-owner branch off (v_all), but a parallel scan
-- there would still start its workers first (12 ms a call, measured by bench/tenant_reads.sh)
set max_parallel_workers_per_gather = 0
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_queue alias for $1;
  a_since alias for $2;
  a_bucket alias for $3;
  v_now timestamptz := ai.now();
  v_all boolean := ai.sees_all_owners();
  v_owner text := case when not v_all then ai.current_owner() end;
  v_start timestamptz;
begin
  if a_queue is not null then
    perform ai._check_text(a_queue, 'queue');
  end if;
  if a_since is null or a_bucket is null or a_bucket < interval '1 second' or a_since < a_bucket
     or a_since > interval '31 days' or extract(epoch from a_since) / extract(epoch from a_bucket) > 10000 then
    raise exception using errcode = 'AS002',
      message = format('since and bucket must be intervals with 1 second <= bucket <= since <= 31 days and at most'
                       ' 10000 buckets, not %s and %s', coalesce(a_since::text, 'NULL'), coalesce(a_bucket::text, 'NULL'));
  end if;
  -- buckets aligned on the epoch, so that two calls a few seconds apart draw the same bars
  v_start := pg_catalog.date_bin(a_bucket, v_now - a_since, timestamptz '2000-01-01 00:00:00+00');
  -- A tenant reads its own sessions' jobs (agent_sessions_owner_created, agent_jobs_thread), as
  -- ai.queue_stats does: what it costs grows with its own rows, never with another tenant's.
  return query
  -- the tenant's sessions read first, on their own (materialized): on a Citus formation they are
  -- on the shards and the jobs on the coordinator (ai.queue_stats says why)
  with mine as materialized (
    select s.thread_id from ai.agent_sessions s where not v_all and s.owner = v_owner
  ), jobs as (
    select j.queue, j.status, j.created_at, j.finished_at
    from ai.agent_jobs j
    where v_all and (a_queue is null or j.queue = a_queue)
      and j.status in ('COMPLETED', 'FAILED') and j.finished_at >= v_start and j.finished_at <= v_now
    union all
    select j.queue, j.status, j.created_at, j.finished_at
    from mine s
    cross join lateral (select j.queue, j.status, j.created_at, j.finished_at
                        from ai.agent_jobs j
                        where j.thread_id = s.thread_id and (a_queue is null or j.queue = a_queue)
                          and j.status in ('COMPLETED', 'FAILED') and j.finished_at >= v_start
                          and j.finished_at <= v_now
                        offset 0) j  -- not flattened into a join: each session's jobs by agent_jobs_thread
    where not v_all
  )
  select j.queue, pg_catalog.date_bin(a_bucket, j.finished_at, timestamptz '2000-01-01 00:00:00+00'),
         count(*) filter (where j.status = 'COMPLETED'), count(*) filter (where j.status = 'FAILED'),
         avg(j.finished_at - j.created_at), max(j.finished_at - j.created_at)
  from jobs j
  group by 1, 2
  order by 1, 2;
end
$$;
comment on function ai.queue_throughput(text, interval, interval) is
  'Jobs that finished (COMPLETED, FAILED) within since of ai.now(), per queue (or only of_queue) and per bucket (buckets aligned on the epoch; empty buckets have no row): how many completed, how many failed, and their mean and longest time from enqueue to finish. Reads the hot table only (archived jobs are not counted). RLS applies: a tenant counts its own jobs (reading its own sessions'' jobs only), a service acting for nobody all. AS002 bad argument (1 second <= bucket <= since <= 31 days, at most 10000 buckets).';
revoke execute on function ai.queue_throughput(text, interval, interval) from public;
grant execute on function ai.queue_throughput(text, interval, interval) to ai_user, ai_service;

-- The runs page's counts of sessions per status. A tenant's call reads its own sessions
-- (agent_sessions_owner_created); a service's, acting for nobody, reads every session.
create or replace function ai.session_status_counts(owner text default null)
returns table (status text, sessions bigint)
language plpgsql stable
-- planned per call: the caller decides the index (a tenant's own rows, or every owner's); a
-- generic plan would guess an average owner's share and read the other tenants' rows
set plan_cache_mode = force_custom_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_owner alias for $1;
  v_all boolean := ai.sees_all_owners();
  v_owner text := case when not v_all then ai.current_owner() end;
begin
  if a_owner is not null then
    perform ai._check_text(a_owner, 'owner');
  end if;
  return query
  select s.status, count(*)
  from ai.agent_sessions s
  where (a_owner is null or s.owner = a_owner) and (v_all or s.owner = v_owner)
  group by s.status
  order by s.status;
end
$$;
comment on function ai.session_status_counts(text) is
  'How many sessions there are per status (statuses without a session have no row), of one owner when given. RLS applies: a tenant counts its own (reading its own sessions only), a service acting for nobody every owner''s (a scan of ai.agent_sessions). AS002 bad owner.';
revoke execute on function ai.session_status_counts(text) from public;
grant execute on function ai.session_status_counts(text) to ai_user, ai_service;

-- A run's streams, for its page (ai.get_stream needs the stream's key).
create or replace function ai.list_streams(thread_id text, stale_after interval default '30 seconds',
                                           max_rows integer default 100, after_stream_key text default null)
returns setof ai.stream_state
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_stale_after alias for $2;
  a_max_rows alias for $3;
  a_after alias for $4;
  v_after_at timestamptz;
  s ai.message_streams;
begin
  perform ai._session_owner(a_thread_id);  -- AS002 bad id, AS001 unknown (or another tenant's)
  perform ai._check_limit(a_max_rows, 'max_rows');
  if a_after is not null then
    -- the cursor is the last row's stream key; its time is read back
    select m.opened_at into v_after_at from ai.message_streams m where m.thread_id = a_thread_id and m.stream_key = a_after;
    if not found then
      raise exception using errcode = 'AS001', message = format('stream %s of thread %s not found', a_after, a_thread_id);
    end if;
  end if;
  if a_stale_after is null or a_stale_after < interval '0' then
    raise exception using errcode = 'AS002',
      message = format('stale_after must be a non-negative interval, not %s', coalesce(a_stale_after::text, 'NULL'));
  end if;
  -- the page first, then each row as a stream state (not a row passed to a function inside the
  -- query: on a Citus formation it would reach the function as the shard's row type)
  for s in
  select m.* from ai.message_streams m where m.thread_id = a_thread_id
    and (a_after is null or (m.opened_at, m.stream_key) > (v_after_at, a_after))
  order by m.opened_at, m.stream_key limit a_max_rows loop
    return next ai._stream_state(s, a_stale_after);
  end loop;
end
$$;
comment on function ai.list_streams(text, interval, integer, text) is
  'The streams of one thread, oldest first (by opened_at, then stream_key), at most max_rows (1 to 10000, default 100; the next page: after_stream_key = the last row''s stream_key), each as ai.get_stream returns it (status, last chunk, stale: open with no chunk for longer than stale_after). AS001 unknown thread (or another tenant''s) or cursor stream, AS002 bad argument.';
revoke execute on function ai.list_streams(text, interval, integer, text) from public;
grant execute on function ai.list_streams(text, interval, integer, text) to ai_user, ai_service;

commit;
