-- Deploy agent-state:queue to pg
-- requires: session_lifecycle
-- requires: errors
begin;

-- The durable job queue
-- =====================
-- ai.agent_jobs holds one row per job. A job advances one session (thread_id) and belongs to
-- that session's owner, so the sessions' row-level security carries over: a tenant enqueues,
-- reads and cancels only its own jobs; workers connect as members of ai_service and, acting for
-- nobody, claim across tenants. No broker: a crashed worker's job is picked up by a fresh
-- process once its lease runs out, and fencing tokens keep the dead one from writing.
--
-- Statuses
--   PENDING --claim--> IN_PROGRESS --complete--> COMPLETED
--                      IN_PROGRESS --fail------> PENDING after a backoff, or FAILED when attempts are spent
--                      IN_PROGRESS --release---> PENDING, due now, the attempt not counted (shutdown)
--   PENDING, IN_PROGRESS, AWAITING_HUMAN --cancel--> CANCELLED
--   FAILED --retry_dead_job--> PENDING
--   AWAITING_HUMAN is reserved for the human-in-the-loop change.
-- A job whose worker died stays IN_PROGRESS until its lease expires. From then on the next claim
-- takes it again and counts an attempt, or, when its attempts are spent, finishes it as FAILED.
-- No cron is needed: ai.reap_expired() only makes dashboards honest sooner.
--
-- Fencing
--   Every claim bumps fencing_token. Every write on behalf of a job names (job_id, fencing_token)
--   and re-checks status, token and lease in the WHERE of the very UPDATE that writes, so a
--   caller acting on a stale view (a zombie worker, a sweep) changes nothing and gets AS006.
--   Maintenance too: reap_expired and cancel_job state the status they act on in their UPDATE,
--   which Postgres re-checks on the newest row version (the race of River #1302 cannot happen).
--   ai.fenced_write() is that check for a caller's own transaction: it takes FOR KEY SHARE on the
--   job row, which a claim (FOR UPDATE SKIP LOCKED) skips, so nobody reclaims the job between
--   the check and the caller's commit, while the holder's renew_lease (a non-key UPDATE) passes.
--
-- One thread at a time
--   Two jobs of one thread are never IN_PROGRESS together. A claim picks only jobs whose thread has
--   no other job IN_PROGRESS and whose thread lock (a transaction-level advisory lock, tried, never
--   waited for) it gets, then takes them in a second statement that checks the thread again with
--   a snapshot younger than that lock, so it sees a sibling's claim that committed meanwhile. The
--   partial unique index agent_jobs_one_running_per_thread backs the rule, even for raw UPDATEs.
--
-- Lock order
--   A claim tries thread advisory locks and locks job rows with FOR UPDATE SKIP LOCKED: it waits
--   on nothing.
--   Every other function locks exactly one job row, by primary key, with an UPDATE (or FOR KEY
--   SHARE in fenced_write). enqueue_job reads the session and inserts; its FK check takes KEY
--   SHARE on the session row. No function holds one job row while waiting for another.
--
-- NOTIFY
--   enqueue_job, release_job and retry_dead_job send pg_notify(ai.queue_channel(queue), '') when
--   the job is due now. Postgres folds identical (channel, payload) pairs within a transaction, so
--   enqueuing 10,000 jobs into one queue in one transaction sends one notification. It is a hint:
--   workers poll as well, so a lost notification costs latency, never a job.
--   LISTEN needs no privilege, so anything in a channel name or payload is public to every role
--   that can guess the name. The payload is empty and the channel is 'ai_jobs_' and a keyed hash
--   of the queue name, under a random key only the schema owner reads (ai.notify_key): a tenant
--   can neither learn queue names nor listen on a queue's channel. Workers (ai_service) ask
--   ai.queue_channel(queue) for the name.
--
-- Churn
--   Claims and finishes change status, which the partial indexes depend on, so those UPDATEs are
--   not HOT and each adds index entries: hence few indexes, partial ones on what is claimable,
--   fillfactor 80 so a row's next version usually fits on its page, and autovacuum triggered by a
--   fixed count of dead rows rather than a fraction of a table that may hold millions of finished
--   jobs. Finished jobs are in no claim index; ai.archive_jobs() moves them out in batches.
--   docs/queue.md has the whole story.

create table ai.agent_jobs (
  job_id bigint generated always as identity primary key,
  thread_id text not null,
  owner text not null,
  queue text not null default 'default' check (pg_catalog.char_length(queue) between 1 and 255),
  status text not null default 'PENDING'
    check (status in ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED', 'AWAITING_HUMAN')),
  payload jsonb not null default '{}',
  priority integer not null default 0,
  run_at timestamptz not null,
  attempts integer not null default 0 check (attempts >= 0),
  max_attempts integer not null default 5 check (max_attempts >= 1),
  lease_owner text,
  lease_expires_at timestamptz,
  fencing_token bigint not null default 0,
  last_error text,
  result jsonb,
  idempotency_key text check (pg_catalog.char_length(idempotency_key) between 1 and 255),
  created_at timestamptz not null,
  updated_at timestamptz not null,
  finished_at timestamptz,
  -- When a claim may take the job: run_at while PENDING, the end of the lease while IN_PROGRESS.
  available_at timestamptz generated always as
    (case when status = 'IN_PROGRESS' then lease_expires_at else run_at end) stored,
  constraint agent_jobs_lease check (status <> 'IN_PROGRESS' or (lease_owner is not null and lease_expires_at is not null)),
  foreign key (thread_id, owner) references ai.agent_sessions (thread_id, owner) on delete cascade
) with (
  -- room on each page for the next version of a row (claim, renew, finish)
  fillfactor = 80,
  -- vacuum after a fixed number of dead rows, however many finished jobs the table keeps
  autovacuum_vacuum_scale_factor = 0,
  autovacuum_vacuum_threshold = 5000,
  autovacuum_vacuum_insert_scale_factor = 0,
  autovacuum_vacuum_insert_threshold = 20000,
  autovacuum_analyze_scale_factor = 0.02,
  autovacuum_vacuum_cost_delay = 1
);
comment on table ai.agent_jobs is 'The durable job queue: one row per job, each advancing one session (thread). See docs/queue.md.';
comment on column ai.agent_jobs.fencing_token is 'Bumped by every claim; every write on behalf of the job must name the current one.';
comment on column ai.agent_jobs.available_at is 'When a claim may take the job: run_at while PENDING, lease_expires_at while IN_PROGRESS.';
comment on column ai.agent_jobs.attempts is 'Claims counted so far (a release gives one back); at max_attempts a failure or an expired lease is final.';

-- What a claim reads: the PENDING and IN_PROGRESS jobs of a queue in claim order, so one ordered
-- scan finds due jobs and expired leases alike. Finished jobs never enter it.
-- (available_at is never NULL there; saying so keeps the planner from using this index for the
-- "is this thread busy?" probe, which must go to the one-thread index: with statistics taken
-- while the queue was empty, a full scan of this one looked free and cost a claim 100 ms.)
create index agent_jobs_claim on ai.agent_jobs (queue, priority desc, available_at, job_id)
  where status in ('PENDING', 'IN_PROGRESS') and available_at is not null;
-- One thread at a time.
create unique index agent_jobs_one_running_per_thread on ai.agent_jobs (thread_id)
  where status = 'IN_PROGRESS';
-- enqueue_job(idempotency_key => ...) returns the first job of that key (per owner and queue).
create unique index agent_jobs_idempotency_key on ai.agent_jobs (owner, queue, idempotency_key)
  where idempotency_key is not null;
-- No index on thread_id alone: every claim and finish moves a row to a new version, and each
-- index pays for that (one CPU measurement: a quarter of a claim + complete). The cost lands on
-- deleting a session, whose cascade scans the jobs; archive_jobs keeps that table small.

-- A caller outside ai_service (by ai.calling_role(), as the functions run as the schema owner)
-- may only cancel a job or answer one that waits for a person, whatever function moves it.
-- Workers (ai_service) are not checked: the WHEN clause lets their claims and finishes through.
create function ai._guard_tenant_job_status() returns trigger
language plpgsql
as $$
begin
  if (new.status = 'CANCELLED' and old.status in ('PENDING', 'IN_PROGRESS', 'AWAITING_HUMAN'))
     or (new.status = 'PENDING' and old.status = 'AWAITING_HUMAN') then
    return new;
  end if;
  raise exception using errcode = 'AS004',
    message = format('job %s cannot go from %s to %s: a tenant may only cancel a job or answer one that waits for a person',
                     old.job_id, old.status, new.status);
end
$$;
comment on function ai._guard_tenant_job_status() is 'Internal trigger: a caller outside ai_service may only cancel a job or put one that waits for a person back to PENDING.';
revoke execute on function ai._guard_tenant_job_status() from public;  -- a trigger needs no grant

create trigger agent_jobs_tenant_status
  before update of status on ai.agent_jobs
  for each row
  when (old.status is distinct from new.status
        and not pg_catalog.pg_has_role(ai.calling_role(), 'ai_service', 'MEMBER'))
  execute function ai._guard_tenant_job_status();

alter table ai.agent_jobs enable row level security;
alter table ai.agent_jobs force row level security;
create policy agent_jobs_by_owner on ai.agent_jobs
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));

-- Finished jobs moved out of the hot table by ai.archive_jobs().
create table ai.agent_jobs_archive (
  like ai.agent_jobs including defaults,
  archived_at timestamptz not null,
  primary key (job_id),
  foreign key (thread_id, owner) references ai.agent_sessions (thread_id, owner) on delete cascade
);
comment on table ai.agent_jobs_archive is 'Finished jobs moved out of ai.agent_jobs by ai.archive_jobs(): the same columns plus archived_at.';
create index agent_jobs_archive_thread on ai.agent_jobs_archive (thread_id);
create index agent_jobs_archive_archived_at on ai.agent_jobs_archive (archived_at);

alter table ai.agent_jobs_archive enable row level security;
alter table ai.agent_jobs_archive force row level security;
create policy agent_jobs_archive_by_owner on ai.agent_jobs_archive
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));

-- No table privilege for ai_user or ai_service: they reach this table only through the functions,
-- which run as the schema owner (SECURITY DEFINER; docs/security.md).

-- ---------------------------------------------------------------------------------------------
-- Internal helpers

create function ai._check_lease(lease interval) returns void
language plpgsql immutable parallel safe
as $$
begin
  if lease is null or lease <= interval '0' then
    raise exception using errcode = 'AS002',
      message = format('lease must be a positive interval, not %s', coalesce(lease::text, 'NULL'));
  end if;
end
$$;
comment on function ai._check_lease(interval) is 'Internal guard: raises AS002 unless a lease is a positive interval.';

create function ai._check_claim(worker_id text, lease interval, queue text) returns void
language plpgsql immutable parallel safe
as $$
begin
  perform ai._check_text(worker_id, 'worker_id');
  perform ai._check_lease(lease);
  perform ai._check_text(queue, 'queue');
end
$$;
comment on function ai._check_claim(text, interval, text) is 'Internal guard of claim_job and claim_jobs: worker_id, lease and queue.';

-- The claim's per-thread lock: a transaction-level advisory lock on (class 'ai', thread), tried,
-- never waited for. A claimer that holds it is the only one that may start a job of that thread
-- until it commits; a hash collision only makes a claimer skip a thread for a moment.
create function ai._lock_thread(thread_id text) returns boolean
language sql volatile parallel restricted
as $$ select pg_catalog.pg_try_advisory_xact_lock(1634296929, pg_catalog.hashtext(thread_id)) $$;
comment on function ai._lock_thread(text) is 'Internal: tries the claim''s transaction-level advisory lock on a thread; true when taken (or already held).';

-- Called after a fenced UPDATE matched no row: AS001 when the caller cannot see the job at all
-- (unknown, or another tenant's), AS006 (lease lost) otherwise, with what the row holds now.
create function ai._raise_lease_lost(job_id bigint, fencing_token bigint) returns void
language plpgsql stable
as $$
declare
  j ai.agent_jobs;
begin
  select * into j from ai.agent_jobs a where a.job_id = _raise_lease_lost.job_id;
  if not found then
    raise exception using errcode = 'AS001', message = format('job %s not found', _raise_lease_lost.job_id);
  end if;
  raise exception using errcode = 'AS006',
    message = format('job %s: lease lost', j.job_id),
    detail = format('the job is %s with fencing token %s (the caller holds %s), lease until %s',
                    j.status, j.fencing_token, _raise_lease_lost.fencing_token,
                    coalesce(j.lease_expires_at::text, 'none'));
end
$$;
comment on function ai._raise_lease_lost(bigint, bigint) is 'Internal: raises AS001 for a job the caller cannot see, else AS006 (lease lost).';

-- Called after a status-guarded UPDATE matched no row: AS001 when the caller cannot see the job,
-- AS004 (invalid transition) naming the status it is in otherwise.
create function ai._raise_not_allowed(job_id bigint, why text) returns void
language plpgsql stable
as $$
declare
  v_status text;
begin
  select a.status into v_status from ai.agent_jobs a where a.job_id = _raise_not_allowed.job_id;
  if not found then
    raise exception using errcode = 'AS001', message = format('job %s not found', _raise_not_allowed.job_id);
  end if;
  raise exception using errcode = 'AS004', message = format('job %s is %s: %s', _raise_not_allowed.job_id, v_status, why);
end
$$;
comment on function ai._raise_not_allowed(bigint, text) is 'Internal: raises AS001 for a job the caller cannot see, else AS004 with its status.';

-- The retry delay after attempt n when fail_job is given none: 2^(n-1) seconds, capped at an hour,
-- with "equal jitter" (half fixed, half random) so jobs that failed together spread out.
create function ai._backoff(attempts integer) returns interval
language sql volatile parallel safe
as $$
  select pg_catalog.make_interval(secs => d / 2 + pg_catalog.random() * d / 2)
  from (select least(3600.0, pg_catalog.power(2.0, greatest(attempts, 1) - 1)) as d) x
$$;
comment on function ai._backoff(integer) is 'Internal: the default retry delay after a number of attempts: between 2^(n-2) and 2^(n-1) seconds, at most an hour.';

-- A claim took an IN_PROGRESS job whose lease ran out with its attempts spent; the claim marked it
-- FAILED (under a new token, so the dead attempt stays fenced out). Record why and stamp it.
create function ai._finish_spent(job_id bigint, now timestamptz) returns void
language sql volatile
as $$
  update ai.agent_jobs j
  set attempts = j.attempts - 1, last_error = format('the lease of attempt %s expired', j.attempts - 1),
      lease_owner = null, lease_expires_at = null, finished_at = _finish_spent.now, updated_at = _finish_spent.now
  where j.job_id = _finish_spent.job_id and j.status = 'FAILED'
$$;
comment on function ai._finish_spent(bigint, timestamptz) is 'Internal: completes the FAILED state of a job a claim found expired with its attempts spent.';

-- ---------------------------------------------------------------------------------------------
-- Enqueue

-- The wake-up channel of a queue (see NOTIFY in the header): a keyed hash of its name.
create table ai.notify_key (
  one boolean primary key default true check (one),
  key text not null
);
comment on table ai.notify_key is 'Internal: the random key of the queue channel names (ai.queue_channel); one row, read by the schema owner only.';
alter table ai.notify_key enable row level security;
alter table ai.notify_key force row level security;
create policy notify_key_schema_owner on ai.notify_key using (true) with check (true);  -- no grant to anyone
insert into ai.notify_key (key)
values (pg_catalog.md5(pg_catalog.gen_random_uuid()::text) || pg_catalog.md5(pg_catalog.gen_random_uuid()::text));

create function ai.queue_channel(queue text) returns text
language sql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
  select 'ai_jobs_' operator(pg_catalog.||) pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(
           pg_catalog.convert_to(k.key operator(pg_catalog.||) ':' operator(pg_catalog.||) queue, 'UTF8')), 'hex'), 32)
  from ai.notify_key k
$$;
comment on function ai.queue_channel(text) is
  'The channel a worker LISTENs on to wake when a job of the queue is due: ''ai_jobs_'' and a keyed hash of the queue name (the payload is empty). For ai_service; tenants cannot compute it, so they learn no queue name and hear no other tenant''s jobs.';

create function ai.enqueue_job(
  thread_id text, payload jsonb default '{}', queue text default 'default', run_at timestamptz default null,
  priority integer default 0, max_attempts integer default 5, idempotency_key text default null)
returns ai.agent_jobs
language plpgsql volatile
set plan_cache_mode = force_generic_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_payload alias for $2;
  a_queue alias for $3;
  a_key alias for $7;
  v_now timestamptz := ai.now();
  v_owner text;
  v_status text;
  j ai.agent_jobs;
begin
  perform ai._check_thread_id(a_thread_id);
  perform ai._check_document(a_payload, 'payload');
  perform ai._check_text(a_queue, 'queue');
  if enqueue_job.priority is null then
    raise exception using errcode = 'AS002', message = 'priority must not be NULL';
  end if;
  if enqueue_job.max_attempts is null or enqueue_job.max_attempts < 1 then
    raise exception using errcode = 'AS002',
      message = format('max_attempts must be at least 1, not %s', coalesce(enqueue_job.max_attempts::text, 'NULL'));
  end if;
  if a_key is not null then
    perform ai._check_text(a_key, 'idempotency_key');
  end if;

  select s.owner, s.status into v_owner, v_status from ai.agent_sessions s where s.thread_id = a_thread_id;
  if not found then
    raise exception using errcode = 'AS001', message = format('thread %s not found', a_thread_id);
  end if;
  if v_status not in ('active', 'waiting') then
    raise exception using errcode = 'AS004', message = format('session %s is %s: no more jobs', a_thread_id, v_status);
  end if;

  insert into ai.agent_jobs (thread_id, owner, queue, payload, priority, run_at, max_attempts,
                             idempotency_key, created_at, updated_at)
  values (a_thread_id, v_owner, a_queue, a_payload, enqueue_job.priority, coalesce(enqueue_job.run_at, v_now),
          enqueue_job.max_attempts, a_key, v_now, v_now)
  on conflict (owner, queue, idempotency_key) where idempotency_key is not null do nothing
  returning * into j;
  if not found then
    -- The key was used before in this queue: the first job is the answer, unchanged.
    select * into j from ai.agent_jobs x
    where x.owner = v_owner and x.queue = a_queue and x.idempotency_key = a_key;
    return j;
  end if;

  if j.run_at <= v_now then
    perform pg_catalog.pg_notify(ai.queue_channel(a_queue), '');
  end if;
  return j;
end
$$;
comment on function ai.enqueue_job(text, jsonb, text, timestamptz, integer, integer, text) is
  'Enqueues a job for a thread (owned by the session''s owner) and returns it, PENDING. run_at NULL means now. A non-NULL idempotency_key is unique per owner and queue: enqueuing it again returns the first job unchanged. Sends pg_notify(ai.queue_channel(queue), '''') when the job is due now (Postgres folds them to one per transaction and queue). AS001 unknown thread, AS002 bad argument, AS003 payload over 1 MiB, AS004 session finished.';

-- ---------------------------------------------------------------------------------------------
-- Claim

create function ai.claim_job(worker_id text, lease interval default '60 seconds', queue text default 'default')
returns setof ai.agent_jobs
language plpgsql volatile
set plan_cache_mode = force_generic_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_now timestamptz := ai.now();
  v_id bigint;
  v_passed bigint[] := '{}'::bigint[];
  j ai.agent_jobs;
begin
  perform ai._check_claim(claim_job.worker_id, claim_job.lease, claim_job.queue);

  for attempt in 1..5 loop
    -- 1. Pick: one ordered scan of agent_jobs_claim finds due jobs and expired leases alike. The
    --    thread's advisory lock keeps every other claimer off this thread until we commit.
    select c.job_id into v_id
    from ai.agent_jobs c
    where c.status in ('PENDING', 'IN_PROGRESS') and c.queue = claim_job.queue and c.available_at <= v_now
      and not exists (select from ai.agent_jobs b
                      where b.thread_id = c.thread_id and b.status = 'IN_PROGRESS' and b.job_id <> c.job_id
                      offset 0)  -- stays a per-row probe of the one-thread index, never a join
      and c.job_id <> all (v_passed)
      and ai._lock_thread(c.thread_id)
    order by c.priority desc, c.available_at, c.job_id
    limit 1
    for update skip locked;
    if v_id is null then
      return;
    end if;
    -- 2. Take it, if its thread is still idle as seen now: this statement's snapshot is younger
    --    than our thread lock, so it sees any claim of a sibling that committed before we got it.
    update ai.agent_jobs u
    set status = case when u.status = 'IN_PROGRESS' and u.attempts >= u.max_attempts then 'FAILED' else 'IN_PROGRESS' end,
        attempts = u.attempts + 1,
        fencing_token = u.fencing_token + 1,
        lease_owner = claim_job.worker_id,
        lease_expires_at = v_now + claim_job.lease,
        updated_at = v_now
    where u.job_id = v_id
      and not exists (select from ai.agent_jobs b
                      where b.thread_id = u.thread_id and b.status = 'IN_PROGRESS' and b.job_id <> u.job_id
                      offset 0)
    returning u.* into j;
    if found and j.status = 'IN_PROGRESS' then
      return next j;
      return;
    end if;
    if found then
      -- its last attempt's lease ran out: finished as FAILED; look again
      perform ai._finish_spent(j.job_id, v_now);
    end if;
    v_passed := v_passed || v_id;
    v_id := null;
  end loop;
end
$$;
comment on function ai.claim_job(text, interval, text) is
  'Claims at most one job of a queue for worker_id: the first by priority (highest first), then due time, then job_id, among PENDING jobs due now and IN_PROGRESS jobs whose lease expired, skipping rows other claimers hold and threads with another job IN_PROGRESS. The job becomes IN_PROGRESS, its attempts grow by one, its fencing_token is bumped and it is leased until ai.now() + lease. Returns 0 or 1 row. An expired job whose attempts are spent becomes FAILED instead and the claim looks again. AS002 bad argument.';

create function ai.claim_jobs(worker_id text, lease interval, queue text, max_jobs integer)
returns setof ai.agent_jobs
language plpgsql volatile
set plan_cache_mode = force_generic_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_now timestamptz := ai.now();
  v_ids bigint[];
begin
  perform ai._check_claim(claim_jobs.worker_id, claim_jobs.lease, claim_jobs.queue);
  perform ai._check_limit(claim_jobs.max_jobs, 'max_jobs', 1000);

  -- 1. Pick, as claim_job does, at most one job per thread (a sibling locked here but not picked
  --    stays as it was; the row lock ends with this transaction).
  with candidates as (
    select c.job_id, c.thread_id, c.priority, c.available_at
    from ai.agent_jobs c
    where c.status in ('PENDING', 'IN_PROGRESS') and c.queue = claim_jobs.queue and c.available_at <= v_now
      and not exists (select from ai.agent_jobs b
                      where b.thread_id = c.thread_id and b.status = 'IN_PROGRESS' and b.job_id <> c.job_id
                      offset 0)  -- stays a per-row probe of the one-thread index, never a join
      and ai._lock_thread(c.thread_id)
    order by c.priority desc, c.available_at, c.job_id
    limit claim_jobs.max_jobs
    for update skip locked
  )
  select pg_catalog.array_agg(d.job_id) into v_ids
  from (select distinct on (c.thread_id) c.job_id from candidates c
        order by c.thread_id, c.priority desc, c.available_at, c.job_id) d;

  -- 2. Take those whose thread is still idle as seen now (see claim_job). The ids go to the UPDATE
  --    as one array: no join, so no whole-row copies kept for the recheck.
  with claimed as (
    update ai.agent_jobs u
    set status = case when u.status = 'IN_PROGRESS' and u.attempts >= u.max_attempts then 'FAILED' else 'IN_PROGRESS' end,
        attempts = u.attempts + 1,
        fencing_token = u.fencing_token + 1,
        lease_owner = claim_jobs.worker_id,
        lease_expires_at = v_now + claim_jobs.lease,
        updated_at = v_now
    where u.job_id = any (v_ids)
      and not exists (select from ai.agent_jobs b
                      where b.thread_id = u.thread_id and b.status = 'IN_PROGRESS' and b.job_id <> u.job_id
                      offset 0)
    returning u.job_id
  )
  select pg_catalog.array_agg(c.job_id) into v_ids from claimed c;

  -- expired jobs whose attempts were spent are finished as FAILED; the others are handed out
  perform ai._finish_spent(f.job_id, v_now) from ai.agent_jobs f where f.job_id = any (v_ids) and f.status = 'FAILED';
  return query
  select * from ai.agent_jobs j
  where j.job_id = any (v_ids) and j.status = 'IN_PROGRESS'
  order by j.priority desc, j.run_at, j.job_id;
end
$$;
comment on function ai.claim_jobs(text, interval, text, integer) is
  'Claims up to max_jobs (1 to 1000) jobs of a queue in one statement, chosen and leased as claim_job does, at most one per thread. AS002 bad argument.';

-- ---------------------------------------------------------------------------------------------
-- The holder's calls: each names (job_id, fencing_token) and is checked in the UPDATE itself

create function ai.renew_lease(job_id bigint, fencing_token bigint, lease interval default '60 seconds')
returns timestamptz
language plpgsql volatile
set plan_cache_mode = force_generic_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_now timestamptz := ai.now();
  v_expires timestamptz;
begin
  perform ai._check_lease(renew_lease.lease);
  update ai.agent_jobs j
  set lease_expires_at = v_now + renew_lease.lease, updated_at = v_now
  where j.job_id = renew_lease.job_id and j.status = 'IN_PROGRESS'
    and j.fencing_token = renew_lease.fencing_token and j.lease_expires_at > v_now
  returning j.lease_expires_at into v_expires;
  if not found then
    perform ai._raise_lease_lost(renew_lease.job_id, renew_lease.fencing_token);
  end if;
  return v_expires;
end
$$;
comment on function ai.renew_lease(bigint, bigint, interval) is
  'Extends the lease of a job held with fencing_token to ai.now() + lease and returns the new expiry. AS006 lease lost (stale token, lease already expired, job no longer IN_PROGRESS), AS001 unknown job, AS002 bad lease.';

create function ai.fenced_write(job_id bigint, fencing_token bigint) returns timestamptz
language plpgsql volatile
set plan_cache_mode = force_generic_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_now timestamptz := ai.now();
  v_expires timestamptz;
begin
  -- KEY SHARE: a claim (FOR UPDATE SKIP LOCKED) skips the row until the caller's transaction
  -- ends, while the holder's renew_lease, a non-key UPDATE, is not blocked.
  select j.lease_expires_at into v_expires
  from ai.agent_jobs j
  where j.job_id = fenced_write.job_id and j.status = 'IN_PROGRESS'
    and j.fencing_token = fenced_write.fencing_token and j.lease_expires_at > v_now
  for key share;
  if not found then
    perform ai._raise_lease_lost(fenced_write.job_id, fenced_write.fencing_token);
  end if;
  return v_expires;
end
$$;
comment on function ai.fenced_write(bigint, bigint) is
  'Asserts that the caller still holds the job (IN_PROGRESS, fencing_token current, lease not expired) and keeps its row locked (FOR KEY SHARE) until the caller''s transaction ends, so no other worker can reclaim it between this check and the commit. Call it first in every transaction that writes on behalf of a job. Returns the lease expiry. AS006 lease lost, AS001 unknown job.';

create function ai.complete_job(job_id bigint, fencing_token bigint, result jsonb default null)
returns ai.agent_jobs
language plpgsql volatile
set plan_cache_mode = force_generic_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_now timestamptz := ai.now();
  j ai.agent_jobs;
begin
  if complete_job.result is not null then
    perform ai._check_document(complete_job.result, 'result');
  end if;
  update ai.agent_jobs u
  set status = 'COMPLETED', result = complete_job.result, lease_owner = null, lease_expires_at = null,
      finished_at = v_now, updated_at = v_now
  where u.job_id = complete_job.job_id and u.status = 'IN_PROGRESS'
    and u.fencing_token = complete_job.fencing_token and u.lease_expires_at > v_now
  returning u.* into j;
  if not found then
    perform ai._raise_lease_lost(complete_job.job_id, complete_job.fencing_token);
  end if;
  return j;
end
$$;
comment on function ai.complete_job(bigint, bigint, jsonb) is
  'Marks a job held with fencing_token COMPLETED with its result (JSON up to 1 MiB, or NULL) and returns it. AS006 lease lost, AS001 unknown job, AS003 result too large.';

create function ai.complete_jobs(job_ids bigint[], fencing_tokens bigint[], results jsonb[] default null)
returns setof bigint
language plpgsql volatile
set plan_cache_mode = force_generic_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_now timestamptz := ai.now();
  v_count integer := pg_catalog.cardinality(complete_jobs.job_ids);
begin
  if complete_jobs.job_ids is null or complete_jobs.fencing_tokens is null
     or pg_catalog.cardinality(complete_jobs.fencing_tokens) <> v_count
     or pg_catalog.cardinality(complete_jobs.results) <> v_count then
    raise exception using errcode = 'AS002', message = 'job_ids, fencing_tokens and results (when given) must be arrays of one length';
  end if;
  perform ai._check_limit(greatest(v_count, 1), 'the number of jobs', 1000);
  if exists (select from pg_catalog.unnest(complete_jobs.results) r where pg_catalog.pg_column_size(r) > ai._max_document_bytes()) then
    raise exception using errcode = 'AS003', message = format('a result is over the limit of %s bytes', ai._max_document_bytes());
  end if;

  -- Each row is fenced on its own; a job whose lease was lost is simply not in the answer. The
  -- arrays are matched by position (no join: no whole-row copies kept for the recheck).
  return query
  update ai.agent_jobs u
  set status = 'COMPLETED', result = complete_jobs.results[pg_catalog.array_position(complete_jobs.job_ids, u.job_id)],
      lease_owner = null, lease_expires_at = null, finished_at = v_now, updated_at = v_now
  where u.job_id = any (complete_jobs.job_ids) and u.status = 'IN_PROGRESS'
    and u.fencing_token = complete_jobs.fencing_tokens[pg_catalog.array_position(complete_jobs.job_ids, u.job_id)]
    and u.lease_expires_at > v_now
  returning u.job_id;
end
$$;
comment on function ai.complete_jobs(bigint[], bigint[], jsonb[]) is
  'Completes up to 1000 jobs in one statement, each with its fencing token (and result, when results is given), each fenced as complete_job is; job_ids must not repeat. Returns the job_ids it completed; a job whose lease was lost is left out instead of raising. AS002 arrays of different lengths or more than 1000 jobs, AS003 a result over 1 MiB.';

create function ai.fail_job(job_id bigint, fencing_token bigint, error text, retry_in interval default null)
returns ai.agent_jobs
language plpgsql volatile
set plan_cache_mode = force_generic_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_now timestamptz := ai.now();
  j ai.agent_jobs;
begin
  if fail_job.error is null then
    raise exception using errcode = 'AS002', message = 'error must not be NULL';
  end if;
  if fail_job.retry_in < interval '0' then
    raise exception using errcode = 'AS002', message = format('retry_in must not be negative, not %s', fail_job.retry_in);
  end if;
  update ai.agent_jobs u
  set status = case when u.attempts >= u.max_attempts then 'FAILED' else 'PENDING' end,
      run_at = case when u.attempts >= u.max_attempts then u.run_at
                    else v_now + coalesce(fail_job.retry_in, ai._backoff(u.attempts)) end,
      finished_at = case when u.attempts >= u.max_attempts then v_now end,
      last_error = fail_job.error, lease_owner = null, lease_expires_at = null, updated_at = v_now
  where u.job_id = fail_job.job_id and u.status = 'IN_PROGRESS'
    and u.fencing_token = fail_job.fencing_token and u.lease_expires_at > v_now
  returning u.* into j;
  if not found then
    perform ai._raise_lease_lost(fail_job.job_id, fail_job.fencing_token);
  end if;
  return j;
end
$$;
comment on function ai.fail_job(bigint, bigint, text, interval) is
  'Records an error for a job held with fencing_token. With attempts left the job is PENDING again, due after retry_in or, when NULL, after an exponential backoff with jitter (2^(attempts-2) to 2^(attempts-1) seconds, at most an hour); with attempts spent it is FAILED. Returns the job. AS006 lease lost, AS001 unknown job, AS002 NULL error or negative retry_in.';

create function ai.release_job(job_id bigint, fencing_token bigint) returns ai.agent_jobs
language plpgsql volatile
set plan_cache_mode = force_generic_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_now timestamptz := ai.now();
  j ai.agent_jobs;
begin
  update ai.agent_jobs u
  set status = 'PENDING', attempts = u.attempts - 1, run_at = v_now,
      lease_owner = null, lease_expires_at = null, updated_at = v_now
  where u.job_id = release_job.job_id and u.status = 'IN_PROGRESS'
    and u.fencing_token = release_job.fencing_token and u.lease_expires_at > v_now
  returning u.* into j;
  if not found then
    perform ai._raise_lease_lost(release_job.job_id, release_job.fencing_token);
  end if;
  perform pg_catalog.pg_notify(ai.queue_channel(j.queue), '');
  return j;
end
$$;
comment on function ai.release_job(bigint, bigint) is
  'Gives back a job held with fencing_token (graceful shutdown): PENDING, due now, the attempt not counted; wakes idle workers. Returns the job. AS006 lease lost, AS001 unknown job.';

-- ---------------------------------------------------------------------------------------------
-- Owner and operator calls

create function ai.cancel_job(job_id bigint) returns ai.agent_jobs
language plpgsql volatile
set plan_cache_mode = force_generic_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_now timestamptz := ai.now();
  j ai.agent_jobs;
begin
  update ai.agent_jobs u
  -- lease_owner stays, to tell who was running it
  set status = 'CANCELLED', finished_at = v_now, updated_at = v_now
  where u.job_id = cancel_job.job_id and u.status in ('PENDING', 'IN_PROGRESS', 'AWAITING_HUMAN')
  returning u.* into j;
  if not found then
    perform ai._raise_not_allowed(cancel_job.job_id, 'it cannot be cancelled');
  end if;
  return j;
end
$$;
comment on function ai.cancel_job(bigint) is
  'Cancels a PENDING, IN_PROGRESS or AWAITING_HUMAN job and returns it; a worker still running it loses its lease (its next fenced call raises AS006). Tenants may cancel their own jobs. AS001 unknown job (or another tenant''s), AS004 job already finished.';

create function ai.retry_dead_job(job_id bigint) returns ai.agent_jobs
language plpgsql volatile
set plan_cache_mode = force_generic_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_now timestamptz := ai.now();
  j ai.agent_jobs;
begin
  update ai.agent_jobs u
  set status = 'PENDING', attempts = 0, run_at = v_now, finished_at = null, updated_at = v_now
  where u.job_id = retry_dead_job.job_id and u.status = 'FAILED'
  returning u.* into j;
  if not found then
    perform ai._raise_not_allowed(retry_dead_job.job_id, 'only FAILED jobs are retried');
  end if;
  perform pg_catalog.pg_notify(ai.queue_channel(j.queue), '');
  return j;
end
$$;
comment on function ai.retry_dead_job(bigint) is
  'Puts a FAILED job back: PENDING, due now, attempts reset to 0, last_error kept; wakes idle workers. Returns the job. For ai_service. AS001 unknown job, AS004 job not FAILED.';

create function ai.get_job(job_id bigint) returns ai.agent_jobs
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  j ai.agent_jobs;
begin
  select * into j from ai.agent_jobs x where x.job_id = get_job.job_id;
  if not found then
    raise exception using errcode = 'AS001', message = format('job %s not found', get_job.job_id);
  end if;
  return j;
end
$$;
comment on function ai.get_job(bigint) is
  'The job row (archived jobs are in ai.agent_jobs_archive). AS001 unknown job, or another tenant''s.';

create function ai.queue_stats(queue text default null)
returns table (queue_name text, pending bigint, due bigint, in_progress bigint, expired_leases bigint,
               awaiting_human bigint, completed bigint, failed bigint, cancelled bigint, oldest_due_age interval)
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_now timestamptz := ai.now();
begin
  return query
  select j.queue,
         count(*) filter (where j.status = 'PENDING'),
         count(*) filter (where j.status = 'PENDING' and j.run_at <= v_now),
         count(*) filter (where j.status = 'IN_PROGRESS'),
         count(*) filter (where j.status = 'IN_PROGRESS' and j.lease_expires_at <= v_now),
         count(*) filter (where j.status = 'AWAITING_HUMAN'),
         count(*) filter (where j.status = 'COMPLETED'),
         count(*) filter (where j.status = 'FAILED'),
         count(*) filter (where j.status = 'CANCELLED'),
         v_now - min(j.run_at) filter (where j.status = 'PENDING' and j.run_at <= v_now)
  from ai.agent_jobs j
  where queue_stats.queue is null or j.queue = queue_stats.queue
  group by j.queue
  order by j.queue;
end
$$;
comment on function ai.queue_stats(text) is
  'Per queue (or only the one named): jobs per status, PENDING jobs due now, IN_PROGRESS jobs whose lease expired, and the age of the oldest due job. RLS applies: a tenant counts its own jobs, a service acting for nobody counts all.';

create function ai.reap_expired(queue text default null) returns integer
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_now timestamptz := ai.now();
  v_count integer;
begin
  -- The conditions sit in the UPDATE's own WHERE, which Postgres re-checks on the newest row
  -- version: a job completed or renewed after this statement's snapshot is left alone.
  update ai.agent_jobs j
  set status = case when j.attempts >= j.max_attempts then 'FAILED' else 'PENDING' end,
      run_at = case when j.attempts >= j.max_attempts then j.run_at else v_now end,
      finished_at = case when j.attempts >= j.max_attempts then v_now end,
      last_error = format('the lease of attempt %s expired', j.attempts),
      lease_owner = null, lease_expires_at = null, updated_at = v_now
  where j.status = 'IN_PROGRESS' and j.lease_expires_at <= v_now
    and (reap_expired.queue is null or j.queue = reap_expired.queue);
  get diagnostics v_count = row_count;
  return v_count;
end
$$;
comment on function ai.reap_expired(text) is
  'Optional sweep for dashboards: IN_PROGRESS jobs whose lease expired go back to PENDING (due now), or to FAILED when their attempts are spent. Claims handle expired jobs by themselves; nothing needs to call this. Returns how many jobs it moved. For ai_service.';

create function ai.archive_jobs(older_than interval default '1 day', max_rows integer default 10000)
returns integer
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_now timestamptz := ai.now();
  v_count integer;
begin
  if archive_jobs.older_than is null or archive_jobs.older_than < interval '0' then
    raise exception using errcode = 'AS002', message = 'older_than must be a non-negative interval';
  end if;
  perform ai._check_limit(archive_jobs.max_rows, 'max_rows', 100000);
  with victims as (
    select j.job_id from ai.agent_jobs j
    where j.status in ('COMPLETED', 'FAILED', 'CANCELLED') and j.finished_at <= v_now - archive_jobs.older_than
    limit archive_jobs.max_rows
    for update skip locked
  ), moved as (
    delete from ai.agent_jobs j using victims v
    where j.job_id = v.job_id and j.status in ('COMPLETED', 'FAILED', 'CANCELLED')
    returning j.*
  )
  insert into ai.agent_jobs_archive select m.*, v_now from moved m;
  get diagnostics v_count = row_count;
  return v_count;
end
$$;
comment on function ai.archive_jobs(interval, integer) is
  'Moves up to max_rows (1 to 100000) finished jobs (COMPLETED, FAILED, CANCELLED) finished more than older_than ago from ai.agent_jobs to ai.agent_jobs_archive and returns how many. Call it until it returns 0; each call is one short transaction. For ai_service. AS002 bad argument.';

-- ---------------------------------------------------------------------------------------------
-- Privileges: tenants enqueue, read and cancel; workers (ai_service) do everything.

revoke execute on function
  ai._check_lease(interval), ai._check_claim(text, interval, text), ai._raise_lease_lost(bigint, bigint),
  ai._raise_not_allowed(bigint, text), ai._lock_thread(text),
  ai._backoff(integer), ai._finish_spent(bigint, timestamptz),
  ai.enqueue_job(text, jsonb, text, timestamptz, integer, integer, text),
  ai.claim_job(text, interval, text), ai.claim_jobs(text, interval, text, integer),
  ai.renew_lease(bigint, bigint, interval), ai.fenced_write(bigint, bigint),
  ai.complete_job(bigint, bigint, jsonb), ai.complete_jobs(bigint[], bigint[], jsonb[]),
  ai.fail_job(bigint, bigint, text, interval), ai.release_job(bigint, bigint), ai.cancel_job(bigint), ai.retry_dead_job(bigint), ai.get_job(bigint),
  ai.queue_stats(text), ai.reap_expired(text), ai.archive_jobs(interval, integer), ai.queue_channel(text)
from public;
grant execute on function ai.enqueue_job(text, jsonb, text, timestamptz, integer, integer, text),
  ai.cancel_job(bigint), ai.get_job(bigint), ai.queue_stats(text)
to ai_user, ai_service;
grant execute on function ai.claim_job(text, interval, text), ai.claim_jobs(text, interval, text, integer),
  ai.renew_lease(bigint, bigint, interval), ai.fenced_write(bigint, bigint),
  ai.complete_job(bigint, bigint, jsonb), ai.complete_jobs(bigint[], bigint[], jsonb[]),
  ai.fail_job(bigint, bigint, text, interval), ai.release_job(bigint, bigint), ai.retry_dead_job(bigint),
  ai.reap_expired(text), ai.archive_jobs(interval, integer), ai.queue_channel(text)
to ai_service;

commit;
