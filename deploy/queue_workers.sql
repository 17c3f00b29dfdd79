-- Deploy agent-state:queue_workers to pg
-- requires: queue
--
-- One row per worker (its worker_id, the lease_owner of the jobs it holds), for two things the
-- job rows cannot tell (docs/queue.md, "Lost answers" and "Dead workers"):
--
-- * Its last claim. A claim whose answer was lost (the connection broke after the server
--   committed) left its jobs IN_PROGRESS under a worker that does not know it holds them: they
--   waited out the whole lease. ai.claim_jobs(..., request_id) records here the request id of
--   the worker's last claim that took jobs, with their ids and fencing tokens; the same call again
--   (the client's retry, with the same request id) answers with the same jobs under the same
--   tokens, if the worker still holds them, instead of claiming others.
-- * Whether it keeps a liveness hold (live): a Worker holds a session advisory lock keyed by its
--   worker_id on a direct connection it keeps open (ai.hold_worker_liveness). Postgres drops the
--   lock when that connection goes (the process died, or the server closed the connection), so a
--   claim that finds the lock of a live worker free for half a second (free_since: when a claim
--   first found it free, on the server's own clock; cleared when the worker takes its hold again)
--   takes its jobs over, whatever their lease. A worker that never took a hold (live false: an
--   older worker, a claim by hand) keeps the lease rule alone.
--
-- Written by each claim that takes jobs under a request id: the primary key is the only index and
-- nothing changes it, so the rewrite is a HOT update on a page with room (fillfactor 50).
-- ai.archive_jobs deletes the rows of workers not seen for as long as it keeps finished jobs.
-- Only the queue's functions (the schema owner) read or write it.
begin;

create table ai.queue_workers (
  worker_id text primary key,
  live boolean not null default false,
  request_id text,
  job_ids bigint[],
  fencing_tokens bigint[],
  free_since timestamptz,
  seen_at timestamptz not null
) with (fillfactor = 50, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);
comment on table ai.queue_workers is
  'Internal: per worker, its last claim that took jobs (request id, job ids, fencing tokens: ai.claim_jobs called again with the same request id answers with the same jobs) and whether it keeps a liveness lock (live: a claim takes over the jobs of a live worker whose lock is free).';

alter table ai.queue_workers enable row level security;
alter table ai.queue_workers force row level security;
-- No grant: only the queue's SECURITY DEFINER functions (the schema owner) reach it.
create policy queue_workers_schema_owner on ai.queue_workers using (true) with check (true);

commit;
