-- ai.metrics() at 100,000 jobs against ai.queue_stats() (a full read of the hot table), paired in
-- one run: psql -X -d agent_state_test -f bench/metrics/cost.sql (as a superuser, on a test
-- database: it deletes every job and side effect first, and leaves the 100,000 jobs behind).
-- The jobs: 1,000 sessions of two tenants, 4 queues; 90,000 COMPLETED (one attempt), 6,000
-- PENDING, 200 IN_PROGRESS, 1,000 FAILED, 300 CANCELLED, 2,500 completed after a retry or a
-- takeover; 200 side effects, 20 of them taken over.
\set ON_ERROR_STOP 1
\timing off
delete from ai.agent_jobs; delete from ai.side_effects;
insert into ai.agent_sessions (thread_id, owner)
select 'mbench-' || i, case when i % 2 = 0 then 'tenant_a' else 'tenant_b' end from generate_series(1, 1000) i
on conflict do nothing;
insert into ai.agent_jobs (thread_id, owner, queue, status, run_at, attempts, lease_owner, lease_expires_at,
                           created_at, updated_at, finished_at, attempt_log)
select 'mbench-' || (i % 1000 + 1), case when (i % 1000 + 1) % 2 = 0 then 'tenant_a' else 'tenant_b' end,
       'q' || (i % 4), s.status, now() - interval '10 minutes', s.attempts,
       case when s.status = 'IN_PROGRESS' then 'w' end, case when s.status = 'IN_PROGRESS' then now() + interval '1 minute' end,
       now() - interval '1 hour', now(), case when s.status in ('COMPLETED', 'FAILED', 'CANCELLED') then now() end,
       case when s.attempts > 1 then '[{"attempt": 1, "outcome": "expired"}, {"attempt": 2, "outcome": "completed"}]'::jsonb
            when s.status = 'COMPLETED' then '[{"attempt": 1, "outcome": "completed"}]'::jsonb
            when s.status = 'FAILED' then '[{"attempt": 1, "outcome": "failed"}]'::jsonb else '[]'::jsonb end
from generate_series(1, 100000) i
cross join lateral (select case when i <= 90000 then 'COMPLETED' when i <= 96000 then 'PENDING'
                                when i <= 96200 and i % 1000 < 200 then 'IN_PROGRESS' when i <= 96200 then 'PENDING'
                                when i <= 97200 then 'FAILED' when i <= 97500 then 'CANCELLED' else 'COMPLETED' end as status,
                           case when i > 97500 then 2 else 1 end as attempts) s;
insert into ai.side_effects (thread_id, idempotency_key, owner, status, takeovers, created_at, updated_at, finished_at)
select 'mbench-' || i, 'k', case when i % 2 = 0 then 'tenant_a' else 'tenant_b' end, 'done',
       case when i <= 20 then 1 else 0 end, now(), now(), now()
from generate_series(1, 200) i;
vacuum analyze ai.agent_jobs; vacuum analyze ai.side_effects; analyze ai.checkpoints; analyze ai.checkpoint_blobs;
select status, count(*) from ai.agent_jobs group by 1 order by 1;

-- 15 paired rounds (metrics, then queue_stats), as the service and as a tenant; the medians
create temporary table t (who text, fn text, ms double precision);
grant all on t to public;
do $$
declare r int; t0 timestamptz; who text;
begin
  for r in 1 .. 15 loop
    foreach who in array array['app_service', 'tenant_a'] loop
      execute format('set local role %I', who);
      t0 := clock_timestamp(); perform * from ai.metrics();
      insert into t values (who, 'metrics', extract(epoch from clock_timestamp() - t0) * 1000);
      t0 := clock_timestamp(); perform * from ai.queue_stats();
      insert into t values (who, 'queue_stats', extract(epoch from clock_timestamp() - t0) * 1000);
      reset role;
    end loop;
  end loop;
end $$;
select who, fn, round(percentile_cont(0.5) within group (order by ms)::numeric, 2) as median_ms,
       round(min(ms)::numeric, 2) as min_ms, count(*) as runs
from t group by 1, 2 order by 1, 2;
set role app_service;
select metric, labels, value from ai.metrics() where labels ->> 'queue' in ('q0') or labels ->> 'queue' is null;
