-- Deploy agent-state:queue_workers_registry to pg
-- requires: queue_workers
--
-- ai.queue_workers becomes the registry of workers an operator reads (ai.list_workers, the
-- console's workers page, `agent-state workers`): besides a worker's last claim and its liveness
-- hold, what it works on and when it was last heard from, idle workers included.
--
-- * queue: the queue of its last claim (each claim of ai.claim_jobs under a request id, the
--   Worker's, writes it).
-- * client_addr: the address its liveness connection came from (inet_client_addr(); null over a
--   Unix socket). The default worker ids already name host and pid (host:pid:thread).
-- * started_at: when it took its liveness hold, or was first heard from (kept while it runs).
-- * stopped_at: when it gave its hold up cleanly (ai.release_worker_liveness); cleared when it
--   takes one again.
-- * seen_at (already there) is when it was last heard from: a claim that takes jobs, an empty
--   claim (an idle worker's poll), a renewal of its leases, its hold. To keep an idle worker's
--   poll a read-only transaction most of the time, an empty claim or a renewal rewrites it only
--   when it is 5 seconds old or more: it is exact to 5 seconds.
-- Additive: workers of the previous release write none of the new columns and keep working.
begin;

alter table ai.queue_workers
  add column queue text,
  add column client_addr text,
  add column started_at timestamptz,
  add column stopped_at timestamptz;

comment on table ai.queue_workers is
  'Internal: the registry of workers, one row per worker_id: its last claim that took jobs (request id, job ids, fencing tokens: ai.claim_jobs called again with the same request id answers with the same jobs), whether it keeps a liveness lock (live: a claim takes over the jobs of a live worker whose lock is free), the queue of its last claim, where its liveness connection came from, when it started, stopped cleanly and was last heard from (seen_at, to 5 seconds). Read through ai.list_workers.';

commit;
