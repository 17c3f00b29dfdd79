-- Revert agent-state:queue_workers_registry from pg

begin;

alter table ai.queue_workers
  drop column queue,
  drop column client_addr,
  drop column started_at,
  drop column stopped_at;

comment on table ai.queue_workers is
  'Internal: per worker, its last claim that took jobs (request id, job ids, fencing tokens: ai.claim_jobs called again with the same request id answers with the same jobs) and whether it keeps a liveness lock (live: a claim takes over the jobs of a live worker whose lock is free).';

commit;
