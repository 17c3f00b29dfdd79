-- Deploy agent-state:metrics to pg
-- requires: metrics_indexes
-- requires: queue_functions
-- requires: side_effects_functions
--
-- ai.metrics(): the figures of the queue and of its guarantees, for an exporter to poll
-- (`agent-state metrics`, docs/observability.md). One row per figure: a metric name, its labels
-- (a JSON object) and its value. Bounded: it reads index ranges of what is live or in trouble,
-- never the history of finished jobs, never a checkpoint:
-- * the PENDING jobs (agent_jobs_key_pending) and the IN_PROGRESS ones (agent_jobs_in_flight):
--   a backlog costs what it holds;
-- * the jobs in agent_jobs_troubled (change metrics_indexes): retried, taken over, dead,
--   cancelled, awaiting a human; a job that ran once and completed is not read;
-- * the side effects taken over (side_effects_taken_over);
-- * checkpoint bytes per step from the planner's statistics (pg_stats, pg_class), for an
--   operator only (they are figures of every tenant's rows).
-- Figures over jobs are of the hot table: ai.archive_jobs moves finished jobs out, and their
-- retries and takeovers with them, so these are gauges, not counters that only grow.
-- Fence refusals (AS006) are not recorded anywhere: the refusal rolls back the writer's
-- transaction, with anything it would have written, so the server keeps no trace of it. A client
-- counts them (the Worker's instruments, docs/observability.md).
-- Functions only: CREATE OR REPLACE, so this change deploys over itself.
begin;

create or replace function ai.metrics()
returns table (metric text, labels jsonb, value double precision)
language plpgsql stable
-- planned per call: a tenant's call and an operator's read different shares of the indexes
set plan_cache_mode = force_custom_plan
set max_parallel_workers_per_gather = 0
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_now timestamptz := ai.now();
  v_start timestamptz := ai._server_start();
  v_all boolean := ai.sees_all_owners();
  v_owner text := case when not v_all then ai.current_owner() end;
  v_rows_taken_over bigint;
  v_takeovers bigint;
  v_bytes double precision;
begin
  -- Row-level security applies as well (the tables force it); the owner test is stated too.
  -- The side effects and the statistics are read first, each on its own, and the jobs after: on a
  -- Citus formation the side effects are on the shards and the jobs on the coordinator, and a
  -- query that reads both (or the catalog with a distributed table) does not plan there
  -- (docs/scaling.md).
  select count(*), coalesce(sum(s.takeovers), 0) into v_rows_taken_over, v_takeovers
  from ai.side_effects s
  where s.takeovers > 0 and (v_all or s.owner = v_owner);
  -- From the statistics ANALYZE keeps (no row is read): the mean stored size of a checkpoint
  -- row's serialized state and of a channel value, and the channel values written per
  -- checkpoint. NULL until ANALYZE has run; an operator's call only.
  if v_all then
    select (select avg_width from pg_catalog.pg_stats
            where schemaname = 'ai' and tablename = 'checkpoints' and attname = 'checkpoint')::double precision
           + coalesce((select avg_width from pg_catalog.pg_stats
                       where schemaname = 'ai' and tablename = 'checkpoint_blobs' and attname = 'blob')::double precision
                      * (select greatest(c.reltuples, 0) from pg_catalog.pg_class c where c.oid = 'ai.checkpoint_blobs'::regclass)
                      / nullif((select greatest(c.reltuples, 0) from pg_catalog.pg_class c
                                where c.oid = 'ai.checkpoints'::regclass), 0), 0)
      into v_bytes;
  end if;
  return query
  with live as (
    select j.queue, j.status, j.run_at, j.lease_expires_at, j.updated_at
    from ai.agent_jobs j
    where j.status = 'PENDING' and (v_all or j.owner = v_owner)
    union all
    select j.queue, j.status, j.run_at, j.lease_expires_at, j.updated_at
    from ai.agent_jobs j
    where j.status = 'IN_PROGRESS' and (v_all or j.owner = v_owner)
  ), troubled as (
    select j.queue, j.status, j.attempt_log
    from ai.agent_jobs j
    where (j.attempts > 1 or j.status in ('FAILED', 'CANCELLED', 'AWAITING_HUMAN')
           or (j.status = 'PENDING' and j.attempt_log <> '[]'::jsonb))
      and (v_all or j.owner = v_owner)
  ), per_queue as (
    select l.queue,
           count(*) filter (where l.status = 'PENDING') as pending,
           count(*) filter (where l.status = 'IN_PROGRESS') as in_progress,
           count(*) filter (where l.status = 'PENDING' and l.run_at <= v_now) as due,
           count(*) filter (where l.status = 'IN_PROGRESS'
                            and not ai._lease_held(l.lease_expires_at, l.updated_at, v_now, v_start)) as expired,
           extract(epoch from v_now - min(l.run_at) filter (where l.status = 'PENDING' and l.run_at <= v_now)) as oldest
    from live l
    group by l.queue
  ), per_queue_troubled as (
    select t.queue,
           count(*) filter (where t.status = 'AWAITING_HUMAN') as awaiting,
           count(*) filter (where t.status = 'FAILED') as dead,
           count(*) filter (where t.status = 'CANCELLED') as cancelled,
           coalesce(sum(pg_catalog.jsonb_array_length(pg_catalog.jsonb_path_query_array(
             t.attempt_log, '$[*] ? (@.outcome == "failed")'))), 0) as failed_attempts,
           coalesce(sum(pg_catalog.jsonb_array_length(pg_catalog.jsonb_path_query_array(
             t.attempt_log, '$[*] ? (@.outcome == "expired")'))), 0) as expired_attempts,
           coalesce(sum(pg_catalog.jsonb_array_length(pg_catalog.jsonb_path_query_array(
             t.attempt_log, '$[*] ? (@.outcome == "deadline_exceeded")'))), 0) as deadline_attempts
    from troubled t
    group by t.queue
  ), queues as (
    select coalesce(p.queue, t.queue) as queue,
           coalesce(p.pending, 0) as pending, coalesce(p.in_progress, 0) as in_progress,
           coalesce(p.due, 0) as due, coalesce(p.expired, 0) as expired, coalesce(p.oldest, 0) as oldest,
           coalesce(t.awaiting, 0) as awaiting, coalesce(t.dead, 0) as dead, coalesce(t.cancelled, 0) as cancelled,
           coalesce(t.failed_attempts, 0) as failed_attempts, coalesce(t.expired_attempts, 0) as expired_attempts,
           coalesce(t.deadline_attempts, 0) as deadline_attempts
    from per_queue p full join per_queue_troubled t on t.queue = p.queue
  )
  select m.metric, m.labels, m.value
  from (
    select 'agent_state_jobs'::text as metric, jsonb_build_object('queue', q.queue, 'state', v.state) as labels,
           v.n::double precision as value, q.queue as k, v.ord
    from queues q
    cross join lateral (values (1, 'PENDING', q.pending), (2, 'IN_PROGRESS', q.in_progress),
                               (3, 'AWAITING_HUMAN', q.awaiting), (4, 'FAILED', q.dead),
                               (5, 'CANCELLED', q.cancelled)) v(ord, state, n)
    union all
    select v.metric, jsonb_build_object('queue', q.queue), v.n::double precision, q.queue, v.ord
    from queues q
    cross join lateral (values (10, 'agent_state_jobs_due', q.due::numeric),
                               (11, 'agent_state_oldest_due_job_age_seconds', q.oldest),
                               (12, 'agent_state_leases_expired', q.expired),
                               (13, 'agent_state_attempts_expired', q.expired_attempts),
                               (14, 'agent_state_attempts_failed', q.failed_attempts),
                               (15, 'agent_state_dead_jobs', q.dead),
                               (16, 'agent_state_attempts_deadline_exceeded', q.deadline_attempts)) v(ord, metric, n)
    union all
    select 'agent_state_side_effect_takeovers', '{}'::jsonb, v_takeovers::double precision, '', 20
    union all
    select 'agent_state_side_effects_taken_over', '{}'::jsonb, v_rows_taken_over::double precision, '', 21
    union all
    select 'agent_state_checkpoint_bytes_per_step', jsonb_build_object('source', 'statistics'), v_bytes, '', 30
    where v_bytes is not null
  ) m
  order by m.metric, m.k, m.ord;
end
$$;
comment on function ai.metrics() is
  'The figures of the queue and its guarantees for an exporter to poll (agent-state metrics; docs/observability.md), one row per figure: metric, labels (JSON object), value. Per queue: agent_state_jobs (state PENDING, IN_PROGRESS, AWAITING_HUMAN, FAILED, CANCELLED), agent_state_jobs_due, agent_state_oldest_due_job_age_seconds, agent_state_leases_expired (running jobs whose lease ran out, not yet taken over), agent_state_attempts_expired (attempts whose lease expired: takeovers and reaps), agent_state_attempts_failed (retries), agent_state_dead_jobs, agent_state_attempts_deadline_exceeded (attempts whose lease ran out at the attempt''s deadline: ai.enqueue_job''s timeout and deadline); agent_state_side_effect_takeovers and agent_state_side_effects_taken_over; for an operator, agent_state_checkpoint_bytes_per_step from the planner''s statistics. Jobs of the hot table only (ai.archive_jobs moves finished ones out): gauges. Bounded: reads the PENDING and IN_PROGRESS jobs and the ones retried, taken over, dead, cancelled or awaiting a human, never completed history. Fence refusals (AS006) are not recorded by the server. RLS applies: a tenant sees its own figures, a service acting for nobody all.';
revoke execute on function ai.metrics() from public;
grant execute on function ai.metrics() to ai_user, ai_service;

commit;
