-- Deploy agent-state:console_reads to pg
-- requires: queue_functions
--
-- The reads of the operator console (python/agent_state/console, docs/console.md) that no other
-- function gives. Functions only: CREATE OR REPLACE throughout, so this change deploys over itself
-- and, after a release, `sqitch rework console_reads` changes a function here.
begin;

-- The queues page's chart: finished jobs of the hot table (ai.archive_jobs moves them out later)
-- per bucket, with the time from enqueue to finish. Reads every job finished within `since` (like
-- ai.queue_stats, a service's call scans the hot table: no index on finished_at, which would cost every finish).
create or replace function ai.queue_throughput(of_queue text default null, since interval default '1 hour',
                                               bucket interval default '5 minutes')
returns table (queue text, bucket_start timestamptz, completed bigint, failed bigint,
               mean_latency interval, max_latency interval)
language plpgsql stable
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
  with jobs as (
    select j.queue, j.status, j.created_at, j.finished_at
    from ai.agent_jobs j
    where v_all and (a_queue is null or j.queue = a_queue)
      and j.status in ('COMPLETED', 'FAILED') and j.finished_at >= v_start and j.finished_at <= v_now
    union all
    select j.queue, j.status, j.created_at, j.finished_at
    from ai.agent_sessions s
    cross join lateral (select j.queue, j.status, j.created_at, j.finished_at
                        from ai.agent_jobs j
                        where j.thread_id = s.thread_id and (a_queue is null or j.queue = a_queue)
                          and j.status in ('COMPLETED', 'FAILED') and j.finished_at >= v_start
                          and j.finished_at <= v_now
                        offset 0) j  -- not flattened into a join: each session's jobs by agent_jobs_thread
    where not v_all and s.owner = v_owner
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

commit;
