-- Deploy agent-state:job_keys to pg
-- requires: queue
-- requires: hot_renewals
-- requires: retention
--
-- Fair shares and limits per key (issue 38; docs/queue.md, "Fair shares and limits").
--
-- Every job has a key (ai.agent_jobs.key): the one enqueue_job(key => ...) names, or '@' and its
-- owner when it names none (each tenant is a key of its own; a key a job names never starts with
-- '@', so no tenant can join another's). A key is a string of the queue, not of a tenant: two
-- tenants that name 'openai' share that key's limits (the provider's quota).
--
-- The fair order is stride scheduling done at enqueue time. Each job gets a virtual time, vtime:
-- the larger of its key's last PENDING job's vtime and where the claims of its queue have got to
-- (ai.queue_clocks), plus 1 / the key's weight. Claims take due jobs by
-- (priority desc, vtime, job_id), one index scan as before. A key with 100,000 due jobs holds
-- vtimes spaced 1/weight apart from the head on; another key's new job lands right behind the
-- head, after at most weight_a / weight_b jobs of each busy key, whatever their backlog. Nothing
-- is scanned per key and no row is written by the enqueuers of a queue: the key's last vtime is
-- the end of an index range (agent_jobs_key_pending), the queue's clock a row the claims move.
--
-- A job enqueued for later (run_at in the future) has no vtime until it is due (a vtime given at
-- enqueue would put it in the way of every claim until then): agent_jobs_claim_scheduled holds
-- those in run_at order, and a claim first gives the ones that came due (a hundred at most) their
-- vtime, as an enqueue at that moment would. Jobs enqueued before this change have neither key
-- nor vtime and are given both the same way.
--
-- ai.job_keys: one row per (queue, key) that an operator set (ai.set_job_key): its weight, its
-- concurrency limit (max_in_flight) and its token bucket (rate_per_minute, burst; tokens and
-- refilled_at kept by the claims). Keys without a row have weight 1 and no limit. A claim locks
-- the rows of the limited keys among the jobs it picked (FOR NO KEY UPDATE SKIP LOCKED: a key
-- another claimer is admitting is left to it), counts the key's running jobs whose lease holds
-- (agent_jobs_in_flight: a slot comes back when its job finishes or its lease runs out), refills
-- and spends the tokens, and takes at most what both allow, all in its own transaction: claimers
-- that race never over-claim.
--
-- The old claim indexes go (the drop first: it takes the strongest lock, then the builds); under
-- a live fleet build the new ones first with CREATE INDEX CONCURRENTLY (docs/operations.md).
begin;

select pg_catalog.set_config('lock_timeout', '5s', true) where pg_catalog.current_setting('lock_timeout') = '0';

drop index if exists ai.agent_jobs_claim_pending;
drop index if exists ai.agent_jobs_in_progress;

alter table ai.agent_jobs add column if not exists key text, add column if not exists vtime double precision;
comment on column ai.agent_jobs.key is 'The job''s fairness and limit key: the key enqueue_job named, else ''@'' and the owner (the tenant''s own key). NULL only for a job enqueued before keys existed and not yet due.';
comment on column ai.agent_jobs.vtime is 'The job''s virtual time in the fair order of its queue and priority (claims go by priority desc, vtime, job_id); NULL until a job enqueued for later is due.';
alter table ai.agent_jobs_archive add column if not exists key text, add column if not exists vtime double precision;
alter table ai_archive.agent_jobs add column if not exists key text, add column if not exists vtime double precision;
alter table ai_archive.agent_jobs_archive add column if not exists key text, add column if not exists vtime double precision;

-- The due jobs in fair order: what a claim scans.
create index if not exists agent_jobs_claim_fair on ai.agent_jobs (queue, priority desc, vtime, job_id)
  where status = 'PENDING' and vtime is not null;
-- The jobs enqueued for later, in due order: a claim gives those due their vtime.
create index if not exists agent_jobs_claim_scheduled on ai.agent_jobs (queue, run_at, job_id)
  where status = 'PENDING' and vtime is null;
-- A key's last PENDING job (its vtime), and the keys with a backlog (ai.job_key_status).
create index if not exists agent_jobs_key_pending on ai.agent_jobs (queue, key, vtime)
  where status = 'PENDING';
-- The running jobs of a queue (expired leases) and of a key (its in-flight count).
create index if not exists agent_jobs_in_flight on ai.agent_jobs (queue, key)
  where status = 'IN_PROGRESS';

create table ai.job_keys (
  queue text not null,
  key text not null,
  weight double precision not null default 1,
  max_in_flight integer,
  rate_per_minute double precision,
  burst integer,
  tokens double precision,
  refilled_at timestamptz,
  updated_at timestamptz not null,
  primary key (queue, key),
  constraint job_keys_row_check check (
    pg_catalog.char_length(queue) between 1 and 255 and pg_catalog.char_length(key) between 1 and 255
    and weight > 0 and weight <= 1000000 and (max_in_flight is null or max_in_flight >= 0)
    and (rate_per_minute is null or rate_per_minute > 0) and (burst is null or burst >= 1))
) with (fillfactor = 50);
comment on table ai.job_keys is
  'Internal: per queue and key, what an operator set (ai.set_job_key: weight, max_in_flight, rate_per_minute, burst) and the token bucket the claims keep (tokens, refilled_at). A key without a row has weight 1 and no limit.';

alter table ai.job_keys enable row level security;
alter table ai.job_keys force row level security;
-- No grant: only the schema owner's functions reach it (tenants read their keys through ai.job_key_status).
create policy job_keys_schema_owner on ai.job_keys using (true) with check (true);

-- Where the claims of a queue have got to in the fair order: the vtime of a job a claim took,
-- kept up to 4 steps behind (a claim writes it only when it moved on by more, and never waits
-- for it: SKIP LOCKED). An enqueue places a key's job no earlier than this (ai._fair_base). It
-- is a row of its own, not a read of the claim index, because a tenant's enqueue sees only its
-- own jobs (row level security) and must not place its jobs by them alone.
create table ai.queue_clocks (
  queue text primary key,
  vtime double precision not null
) with (fillfactor = 50);
comment on table ai.queue_clocks is
  'Internal: per queue, the virtual time the claims have reached in the fair order (to 4 steps): where an enqueue places a key''s job at the earliest.';
alter table ai.queue_clocks enable row level security;
alter table ai.queue_clocks force row level security;
create policy queue_clocks_schema_owner on ai.queue_clocks using (true) with check (true);

create type ai.job_key_status_row as (queue text, key text, weight double precision, max_in_flight integer,
  in_flight bigint, rate_per_minute double precision, burst integer, tokens double precision, backlog bigint, due bigint);
comment on type ai.job_key_status_row is 'A row of ai.job_key_status: one key of a queue, its settings and figures.';

commit;
