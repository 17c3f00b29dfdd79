-- Deploy agent-state:queue_functions to pg
-- requires: queue
-- requires: sessions_functions
--
-- The functions and triggers of queue (its tables, indexes and row rules:
-- deploy/queue.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework queue_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

-- added after v0.1.0 (deploy/queue_functions.sql)
drop function ai._xmax_in_flight(xid);
drop function ai._job_key(text, text);
drop function ai._fair_base(text, text, integer, timestamptz);
drop function ai._key_step(text, text);
drop function ai._advance_clock(text, double precision);
drop function ai._activate_due(text, timestamptz);
drop function ai._admit(text, bigint[], bigint[], timestamptz, timestamptz);
drop function ai.complete_and_claim(text, interval, text, integer, text, bigint[], bigint[], jsonb[]);
drop function ai.claim_jobs(text, interval, text, integer, text);
drop function ai.hold_worker_liveness(text);
drop function ai.release_worker_liveness(text);
drop function ai._dead_workers();
drop function ai._liveness_class();
drop function ai._lease_held(timestamptz, timestamptz, timestamptz, timestamptz);
drop function ai._server_start();
drop function ai._check_enqueue(text, jsonb, text, integer, integer, text);
drop function ai._enqueue_owner(text);
-- the 12-argument enqueue_job (deadlines 8-10, key 11, headers 12); the tagged copy below makes the 7-argument one again
drop function ai.enqueue_job(text, jsonb, text, timestamptz, integer, integer, text, interval, timestamptz, timestamptz, text, jsonb);
drop function ai._check_deadlines(timestamptz, interval, timestamptz, timestamptz);
drop function ai._end_overdue(text, timestamptz, timestamptz);
drop function ai.set_queue_deadlines(text, interval, interval, interval);
drop function ai.snooze_job(bigint, bigint, timestamptz);
drop function ai._check_headers(jsonb);

-- The attempt history. Transitions update the job row; an attempt that ends appends to it: the
-- claim that took an expired lease, a complete, fail, release, cancel, a wait for a person, or a
-- reap. The append is part of the UPDATE that ends the attempt, so the row is written once, by the
-- same transaction, with no extra round trip and no extra row. A completion (the hot path) writes
-- its entry in its own SET list; every other ending goes through a BEFORE trigger whose WHEN
-- clause keeps it off claims of PENDING jobs, lease renewals and completions.
-- One entry of the log. A plain SQL expression, so that it inlines where a completion writes it
-- in its own UPDATE (complete_job, complete_jobs: the hot path calls no trigger).
create or replace function ai._attempt_entry(attempt integer, worker text, fencing_token bigint, claimed_at timestamptz,
                                  lease_expires_at timestamptz, ended_at timestamptz, outcome text, error text)
returns jsonb
language sql immutable parallel safe
as $$
  select pg_catalog.jsonb_build_object('attempt', attempt, 'worker', worker, 'fencing_token', fencing_token,
                                       'claimed_at', claimed_at, 'lease_expires_at', lease_expires_at,
                                       'ended_at', ended_at, 'outcome', outcome, 'error', error)
$$;
comment on function ai._attempt_entry(integer, text, bigint, timestamptz, timestamptz, timestamptz, text, text) is
  'Internal: one entry of ai.agent_jobs.attempt_log.';

create or replace function ai._log_attempt() returns trigger
language plpgsql
as $$
begin
  -- ended_at is the UPDATE's updated_at: every path that ends an attempt sets it to its ai.now().
  new.attempt_log := new.attempt_log operator(pg_catalog.||) ai._attempt_entry(
    old.attempts, old.lease_owner, old.fencing_token, old.claimed_at, old.lease_expires_at, new.updated_at,
    case
      when new.status = 'CANCELLED' then 'cancelled'
      when new.status = 'AWAITING_HUMAN' then 'awaiting_human'
      when new.status = 'IN_PROGRESS' or old.lease_expires_at <= new.updated_at then 'expired'
      when new.status = 'PENDING' and new.attempts < old.attempts then 'released'
      else 'failed' end,
    case when new.status in ('PENDING', 'FAILED') and old.lease_expires_at > new.updated_at
              and new.attempts >= old.attempts then new.last_error end);
  return new;
end
$$;
comment on function ai._log_attempt() is 'Internal trigger: appends the attempt an UPDATE ends to the job''s attempt_log (outcome failed, released, cancelled, awaiting_human or expired; a completion writes its own entry).';
revoke execute on function ai._log_attempt() from public;  -- a trigger needs no grant
revoke execute on function ai._attempt_entry(integer, text, bigint, timestamptz, timestamptz, timestamptz, text, text) from public;

create or replace trigger agent_jobs_attempt_ended
  before update on ai.agent_jobs
  for each row
  when (old.status = 'IN_PROGRESS' and new.status <> 'COMPLETED'
        and (new.status <> 'IN_PROGRESS' or new.fencing_token <> old.fencing_token))
  execute function ai._log_attempt();

-- The tenant guard, after the row is written: an error rolls the statement back all the same.
-- One trigger for status moves, with the smallest WHEN clause that is false for a worker's claim
-- and finish (the two UPDATEs a queue is made of), so they never run it: a claim sets lease_owner,
-- a complete, fail, release, reap or request_human clears it. A tenant holds no privilege on
-- lease_owner, so each of a tenant's raw UPDATEs runs it; so does every cancel (cancel_job leaves
-- lease_owner as it was; a job that waits for a person has none) and an answer to a job that waits
-- (none before, none after). It applies the tenant rule (only cancel a job, or answer one that
-- waits for a person) and, when a job that waited for a person is cancelled, closes its approval
-- (ai._close_approval_of_job, deploy/human_in_the_loop_functions.sql: PL/pgSQL resolves the call
-- when it runs, so this change needs nothing of that one to deploy). A service that cancels a
-- waiting job by hand must leave lease_owner alone for that to happen, as cancel_job does.
create or replace function ai._job_status_moved() returns trigger
language plpgsql
as $$
begin
  if old.status = new.status then
    return null;
  end if;
  if not pg_catalog.pg_has_role(ai.calling_role(), 'ai_service', 'MEMBER')
     and not ((new.status = 'CANCELLED' and old.status in ('PENDING', 'IN_PROGRESS', 'AWAITING_HUMAN'))
              or (new.status = 'PENDING' and old.status = 'AWAITING_HUMAN')) then
    raise exception using errcode = 'AS004',
      message = format('job %s cannot go from %s to %s: a tenant may only cancel a job or answer one that waits for a person',
                       old.job_id, old.status, new.status);
  end if;
  -- A raw UPDATE to CANCELLED (cancel_job sets it) gets its finish time, or archive_jobs, which
  -- moves jobs by finished_at, would keep it forever. (This UPDATE runs the trigger again, and
  -- stops at the first test above: the status does not move.)
  if new.status = 'CANCELLED' and new.finished_at is null then
    update ai.agent_jobs j set finished_at = ai.now() where j.job_id = new.job_id;
  end if;
  if old.status = 'AWAITING_HUMAN' and new.status = 'CANCELLED' then
    perform ai._close_approval_of_job(new.job_id, new.thread_id);
  end if;
  return null;
end
$$;
comment on function ai._job_status_moved() is
  'Internal trigger (after a job''s status moves, except a worker''s claim or finish): outside ai_service only a cancel or the answer to a job that waits for a person is allowed (AS004 otherwise); a cancel written without finished_at gets it; a job that goes from AWAITING_HUMAN to CANCELLED has its pending approval cancelled, an approval_cancelled event written, and a waiting session made active again. Runs as the caller.';
revoke execute on function ai._job_status_moved() from public;  -- a trigger needs no grant

create or replace trigger agent_jobs_status_moved
  after update of status on ai.agent_jobs
  for each row
  when (new.lease_owner is not distinct from old.lease_owner)
  execute function ai._job_status_moved();

-- No table privilege for ai_user or ai_service: they reach this table only through the functions,
-- which run as the schema owner (SECURITY DEFINER; docs/security.md).

-- ---------------------------------------------------------------------------------------------
-- Internal helpers

create or replace function ai._check_lease(lease interval) returns void
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

create or replace function ai._check_claim(worker_id text, lease interval, queue text) returns void
language plpgsql immutable parallel safe
as $$
begin
  perform ai._check_text(worker_id, 'worker_id');
  perform ai._check_lease(lease);
  perform ai._check_text(queue, 'queue');
end
$$;
comment on function ai._check_claim(text, interval, text) is 'Internal guard of claim_job and claim_jobs: worker_id, lease and queue.';

-- The claim's per-thread lock: a row lock (FOR NO KEY UPDATE, tried with SKIP LOCKED, never
-- waited for) on the thread's row in ai.agent_sessions, held until the claim commits. A claimer
-- that holds it is the only one that may start a job of that thread. No tenant can take it for
-- another tenant's thread: row-level security hides that row (an advisory-lock key, which any
-- role can take, let a tenant starve another's jobs). It does not conflict with the KEY SHARE
-- that enqueue_job's foreign key takes; a write to the session in flight (an append, a
-- checkpoint) makes a claim skip the thread for that moment. claim_job and claim_jobs
-- write the same lock out in their query, which spares a call per row.
create or replace function ai._lock_thread(thread_id text) returns boolean
language plpgsql volatile parallel restricted
set search_path = pg_catalog, pg_temp
as $$
begin
  perform from ai.agent_sessions s where s.thread_id = _lock_thread.thread_id for no key update skip locked;
  return found;
end
$$;
comment on function ai._lock_thread(text) is 'Internal: tries the claim''s lock on a thread (its ai.agent_sessions row, FOR NO KEY UPDATE SKIP LOCKED, until the transaction ends); true when taken (or already held).';

-- Called after a fenced UPDATE matched no row: AS001 when the caller cannot see the job at all
-- (unknown, or another tenant's), AS006 (lease lost) otherwise, with what the row holds now.
create or replace function ai._raise_lease_lost(job_id bigint, fencing_token bigint) returns void
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
create or replace function ai._raise_not_allowed(job_id bigint, why text) returns void
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
create or replace function ai._backoff(attempts integer) returns interval
language sql volatile parallel safe
as $$
  select pg_catalog.make_interval(secs => d / 2 + pg_catalog.random() * d / 2)
  from (select least(3600.0, pg_catalog.power(2.0, greatest(attempts, 1) - 1)) as d) x
$$;
comment on function ai._backoff(integer) is 'Internal: the default retry delay after a number of attempts: between 2^(n-2) and 2^(n-1) seconds, at most an hour.';

-- A claim took an IN_PROGRESS job whose lease ran out with its attempts spent; the claim marked it
-- FAILED (under a new token, so the dead attempt stays fenced out). Record why and stamp it.
create or replace function ai._finish_spent(job_id bigint, now timestamptz) returns void
language sql volatile
as $$
  update ai.agent_jobs j
  set attempts = j.attempts - 1, last_error = format('the lease of attempt %s expired', j.attempts - 1),
      lease_owner = null, lease_expires_at = null, finished_at = _finish_spent.now, updated_at = _finish_spent.now
  where j.job_id = _finish_spent.job_id and j.status = 'FAILED'
$$;
comment on function ai._finish_spent(bigint, timestamptz) is 'Internal: completes the FAILED state of a job a claim found expired with its attempts spent.';

create or replace function ai.queue_channel(queue text) returns text
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

create or replace function ai.enqueue_job(
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

create or replace function ai.claim_job(worker_id text, lease interval default '60 seconds', queue text default 'default')
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
  -- The guards as plain expressions (no query on the way of every claim); a failing argument
  -- goes to the shared guard, which raises its error.
  if claim_job.worker_id is null or claim_job.worker_id = '' or pg_catalog.char_length(claim_job.worker_id) > 255
     or claim_job.lease is null or claim_job.lease <= interval '0'
     or claim_job.queue is null or claim_job.queue = '' or pg_catalog.char_length(claim_job.queue) > 255 then
    perform ai._check_claim(claim_job.worker_id, claim_job.lease, claim_job.queue);
  end if;

  for attempt in 1..5 loop
    -- 1. Pick: one ordered scan of agent_jobs_claim finds due jobs and expired leases alike. The
    --    thread's lock keeps every other claimer off this thread until we commit.
    select c.job_id into v_id
    from ai.agent_jobs c
    where c.status in ('PENDING', 'IN_PROGRESS') and c.queue = claim_job.queue and c.available_at <= v_now
      and not exists (select from ai.agent_jobs b
                      where b.thread_id = c.thread_id and b.status = 'IN_PROGRESS' and b.job_id <> c.job_id
                      offset 0)  -- stays a per-row probe of the one-thread index, never a join
      and c.job_id <> all (v_passed)
      -- the thread lock (ai._lock_thread, written out so it costs no function call per row):
      -- the thread's session row, which no tenant can lock for another tenant's thread
      and exists (select from ai.agent_sessions s where s.thread_id = c.thread_id
                  offset 0 for no key update skip locked)
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
        claimed_at = v_now,
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

create or replace function ai.claim_jobs(worker_id text, lease interval, queue text, max_jobs integer)
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
  v_expired boolean;
begin
  if claim_jobs.worker_id is null or claim_jobs.worker_id = '' or pg_catalog.char_length(claim_jobs.worker_id) > 255
     or claim_jobs.lease is null or claim_jobs.lease <= interval '0'
     or claim_jobs.queue is null or claim_jobs.queue = '' or pg_catalog.char_length(claim_jobs.queue) > 255 then
    perform ai._check_claim(claim_jobs.worker_id, claim_jobs.lease, claim_jobs.queue);
  end if;
  if claim_jobs.max_jobs is null or claim_jobs.max_jobs < 1 or claim_jobs.max_jobs > 1000 then
    perform ai._check_limit(claim_jobs.max_jobs, 'max_jobs', 1000);
  end if;

  -- 1. Pick, as claim_job does, at most one job per thread (a sibling locked here but not picked
  --    stays as it was; the row lock ends with this transaction).
  with candidates as (
    select c.job_id, c.thread_id, c.priority, c.available_at, c.status
    from ai.agent_jobs c
    where c.status in ('PENDING', 'IN_PROGRESS') and c.queue = claim_jobs.queue and c.available_at <= v_now
      and not exists (select from ai.agent_jobs b
                      where b.thread_id = c.thread_id and b.status = 'IN_PROGRESS' and b.job_id <> c.job_id
                      offset 0)  -- stays a per-row probe of the one-thread index, never a join
      -- the thread lock (ai._lock_thread, written out so it costs no function call per row):
      -- the thread's session row, which no tenant can lock for another tenant's thread
      and exists (select from ai.agent_sessions s where s.thread_id = c.thread_id
                  offset 0 for no key update skip locked)
    order by c.priority desc, c.available_at, c.job_id
    limit claim_jobs.max_jobs
    for update skip locked
  )
  select pg_catalog.array_agg(d.job_id), coalesce(pg_catalog.bool_or(d.expired), false) into v_ids, v_expired
  from (select distinct on (c.thread_id) c.job_id, c.status = 'IN_PROGRESS' as expired from candidates c
        order by c.thread_id, c.priority desc, c.available_at, c.job_id) d;
  if v_ids is null then
    return;
  end if;

  -- 2. Take those whose thread is still idle as seen now (see claim_job). The ids go to the UPDATE
  --    as one array: no join, so no whole-row copies kept for the recheck. The common case, only
  --    PENDING jobs picked, hands out what the UPDATE returns: one statement, no second read.
  if not v_expired then
    return query
    with claimed as (
      update ai.agent_jobs u
      set status = 'IN_PROGRESS',
          attempts = u.attempts + 1,
          fencing_token = u.fencing_token + 1,
          lease_owner = claim_jobs.worker_id,
          claimed_at = v_now,
          lease_expires_at = v_now + claim_jobs.lease,
          updated_at = v_now
      where u.job_id = any (v_ids) and u.status = 'PENDING'
        and not exists (select from ai.agent_jobs b
                        where b.thread_id = u.thread_id and b.status = 'IN_PROGRESS' and b.job_id <> u.job_id
                        offset 0)
      returning u.*
    )
    select * from claimed c order by c.priority desc, c.run_at, c.job_id;
    return;
  end if;

  -- Some leases ran out: those whose attempts are spent are finished as FAILED, the others handed out.
  with claimed as (
    update ai.agent_jobs u
    set status = case when u.status = 'IN_PROGRESS' and u.attempts >= u.max_attempts then 'FAILED' else 'IN_PROGRESS' end,
        attempts = u.attempts + 1,
        fencing_token = u.fencing_token + 1,
        lease_owner = claim_jobs.worker_id,
        claimed_at = v_now,
        lease_expires_at = v_now + claim_jobs.lease,
        updated_at = v_now
    where u.job_id = any (v_ids)
      and not exists (select from ai.agent_jobs b
                      where b.thread_id = u.thread_id and b.status = 'IN_PROGRESS' and b.job_id <> u.job_id
                      offset 0)
    returning u.job_id
  )
  select pg_catalog.array_agg(c.job_id) into v_ids from claimed c;

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

create or replace function ai.renew_lease(job_id bigint, fencing_token bigint, lease interval default '60 seconds')
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

-- A worker holding many long runs renewed their leases one call each: at 200 runs renewing every
-- few seconds that is a statement, a transaction and a commit per lease. ai.renew_leases renews
-- every lease one worker holds in one statement (one transaction, one commit, one plan), with the
-- same checks per job as ai.renew_lease. A lease that is lost is left out of the result instead of
-- raising, so one lost job does not stop the renewal of the others; the caller compares.
-- (docs/queue.md; the capacity bench, bench/capacity.sh, measures it against one call per lease.)
create or replace function ai.renew_leases(worker_id text, job_ids bigint[], fencing_tokens bigint[],
                                lease interval default '60 seconds')
returns table (job_id bigint, lease_expires_at timestamptz)
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
set plan_cache_mode = force_generic_plan
as $$
#variable_conflict use_column
declare
  v_now timestamptz := ai.now();
begin
  perform ai._check_text(renew_leases.worker_id, 'worker_id');
  perform ai._check_lease(renew_leases.lease);
  if renew_leases.job_ids is null or renew_leases.fencing_tokens is null then
    raise exception using errcode = 'AS002', message = 'renew_leases: job_ids and fencing_tokens must not be NULL';
  end if;
  if pg_catalog.cardinality(renew_leases.job_ids) <> pg_catalog.cardinality(renew_leases.fencing_tokens) then
    raise exception using errcode = 'AS002', message = pg_catalog.format('renew_leases: %s job_ids but %s fencing_tokens',
      pg_catalog.cardinality(renew_leases.job_ids), pg_catalog.cardinality(renew_leases.fencing_tokens));
  end if;
  if pg_catalog.cardinality(renew_leases.job_ids) > 1000 then
    raise exception using errcode = 'AS002', message = pg_catalog.format('renew_leases: at most 1000 jobs per call, not %s',
      pg_catalog.cardinality(renew_leases.job_ids));
  end if;
  -- The same conditions as renew_lease, plus the worker: the row must still be IN_PROGRESS under
  -- this token and this worker, with a lease that has not run out.
  return query
  update ai.agent_jobs j
  set lease_expires_at = v_now OPERATOR(pg_catalog.+) renew_leases.lease, updated_at = v_now
  from rows from (pg_catalog.unnest(renew_leases.job_ids), pg_catalog.unnest(renew_leases.fencing_tokens)) as h(job_id, fencing_token)
  where j.job_id = h.job_id and j.fencing_token = h.fencing_token and j.status = 'IN_PROGRESS'
    and j.lease_owner = renew_leases.worker_id and j.lease_expires_at > v_now
  returning j.job_id, j.lease_expires_at;
end
$$;
comment on function ai.renew_leases(text, bigint[], bigint[], interval) is
  'Extends to ai.now() + lease, in one statement, every lease of job_ids that worker_id holds with the matching fencing_tokens (at most 1000); returns one row per renewed job with its new expiry. A lease that is lost (stale token, another worker, expired, job no longer IN_PROGRESS, unknown job) is left out, not raised: the caller compares. AS002 bad argument (empty worker_id, bad lease, NULL arrays, arrays of different lengths, more than 1000 jobs).';

revoke execute on function ai.renew_leases(text, bigint[], bigint[], interval) from public;
grant execute on function ai.renew_leases(text, bigint[], bigint[], interval) to ai_service;

-- Whether a row version was written by the current transaction (or one of its subtransactions).
-- Used on a row locked FOR SHARE, so any writer still in progress is this transaction.
create or replace function ai._written_here(x xid) returns boolean
language sql volatile parallel restricted
set search_path = pg_catalog, pg_temp
as $$
  -- the 64-bit id nearest to the current one with these low 32 bits (a subtransaction's id is
  -- larger than its parent's, a row's older): xmin is never 2^31 transactions away
  select case when f >= 0 then coalesce(pg_catalog.pg_xact_status(f::text::xid8) = 'in progress', false) else false end
  from (select c + d - case when d > 2147483648 then 4294967296 when d < -2147483648 then -4294967296 else 0 end as f
        from (select c, x::text::numeric - pg_catalog.mod(c, 4294967296) as d
              from (select pg_catalog.pg_current_xact_id()::text::numeric as c) cur) diff) full_xid
$$;
comment on function ai._written_here(xid) is 'Internal: true when a row version''s xmin is the current transaction or one of its subtransactions.';

-- SECURITY DEFINER: a deferred trigger fires at commit, outside fenced_write, as the caller, who
-- holds no privilege on ai.agent_jobs.
create or replace function ai._check_fence_at_commit() returns trigger
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_now timestamptz;
  j record;
begin
  select a.status, a.fencing_token, a.lease_expires_at, a.xmin into j
  from ai.agent_jobs a
  where a.job_id = new.job_id
  for share;
  v_now := ai.now();  -- after the lock, which may have waited for a writer of the row
  if found and j.fencing_token = new.fencing_token
     and ((j.status = 'IN_PROGRESS' and j.lease_expires_at > v_now)
          or (j.status <> 'IN_PROGRESS' and ai._written_here(j.xmin))) then
    return null;
  end if;
  raise exception using errcode = 'AS006',
    message = format('job %s: lease lost before the fenced transaction committed', new.job_id),
    detail = case when found
                  then format('the job is %s with fencing token %s (the transaction holds %s), lease until %s, now %s',
                              j.status, j.fencing_token, new.fencing_token,
                              coalesce(j.lease_expires_at::text, 'none'), v_now)
                  else 'the job is gone' end,
    hint = 'nothing this transaction wrote was kept; the job''s new holder, if any, does the work';
end
$$;
comment on function ai._check_fence_at_commit() is 'Internal trigger (deferred, at commit): a transaction that called ai.fenced_write commits only if its job is still held under its token with a lease not ended, or was finished by that transaction itself; AS006 otherwise.';
revoke execute on function ai._check_fence_at_commit() from public;  -- a trigger needs no grant

drop trigger if exists job_fences_checked_at_commit on ai.job_fences;
create constraint trigger job_fences_checked_at_commit
  after insert on ai.job_fences
  deferrable initially deferred
  for each row execute function ai._check_fence_at_commit();

create or replace function ai.fenced_write(job_id bigint, fencing_token bigint) returns timestamptz
language plpgsql volatile
set plan_cache_mode = force_generic_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_now timestamptz := ai.now();
  v_expires timestamptz;
  v_fence tid;
begin
  -- The check now, without a row lock: nothing waits for this transaction. Its commit checks
  -- again (ai._check_fence_at_commit, queued by the insert; the row itself goes at once).
  select j.lease_expires_at into v_expires
  from ai.agent_jobs j
  where j.job_id = fenced_write.job_id and j.status = 'IN_PROGRESS'
    and j.fencing_token = fenced_write.fencing_token and j.lease_expires_at > v_now;
  if not found then
    perform ai._raise_lease_lost(fenced_write.job_id, fenced_write.fencing_token);
  end if;
  insert into ai.job_fences (job_id, fencing_token) values (fenced_write.job_id, fenced_write.fencing_token)
  returning ctid into v_fence;
  delete from ai.job_fences f where f.ctid = v_fence;
  return v_expires;
end
$$;
comment on function ai.fenced_write(bigint, bigint) is
  'Asserts that the caller still holds the job (IN_PROGRESS, fencing_token current, lease not expired) and checks it again when the caller''s transaction commits: the commit fails with AS006, keeping nothing, if by then the job was taken away (reaped, cancelled, released, completed or failed by another transaction, reclaimed) or its lease has ended, unless the transaction finished the job itself. Call it first in every transaction that writes on behalf of a job. Takes no lock: nothing waits for the transaction. Returns the lease expiry. AS006 lease lost, AS001 unknown job.';

create or replace function ai.complete_job(job_id bigint, fencing_token bigint, result jsonb default null)
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
      finished_at = v_now, updated_at = v_now,
      attempt_log = u.attempt_log operator(pg_catalog.||) ai._attempt_entry(
        u.attempts, u.lease_owner, u.fencing_token, u.claimed_at, u.lease_expires_at, v_now, 'completed', null)
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

create or replace function ai.complete_jobs(job_ids bigint[], fencing_tokens bigint[], results jsonb[] default null)
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
  if v_count > 1000 then
    perform ai._check_limit(v_count, 'the number of jobs', 1000);
  end if;
  if complete_jobs.results is not null
     and exists (select from pg_catalog.unnest(complete_jobs.results) r where pg_catalog.pg_column_size(r) > ai._max_document_bytes()) then
    raise exception using errcode = 'AS003', message = format('a result is over the limit of %s bytes', ai._max_document_bytes());
  end if;

  -- Each row is fenced on its own; a job whose lease was lost is simply not in the answer. The
  -- arrays are matched by position (no join: no whole-row copies kept for the recheck).
  return query
  update ai.agent_jobs u
  set status = 'COMPLETED', result = complete_jobs.results[pg_catalog.array_position(complete_jobs.job_ids, u.job_id)],
      lease_owner = null, lease_expires_at = null, finished_at = v_now, updated_at = v_now,
      attempt_log = u.attempt_log operator(pg_catalog.||) ai._attempt_entry(
        u.attempts, u.lease_owner, u.fencing_token, u.claimed_at, u.lease_expires_at, v_now, 'completed', null)
  where u.job_id = any (complete_jobs.job_ids) and u.status = 'IN_PROGRESS'
    and u.fencing_token = complete_jobs.fencing_tokens[pg_catalog.array_position(complete_jobs.job_ids, u.job_id)]
    and u.lease_expires_at > v_now
  returning u.job_id;
end
$$;
comment on function ai.complete_jobs(bigint[], bigint[], jsonb[]) is
  'Completes up to 1000 jobs in one statement, each with its fencing token (and result, when results is given), each fenced as complete_job is; job_ids must not repeat. Returns the job_ids it completed; a job whose lease was lost is left out instead of raising. AS002 arrays of different lengths or more than 1000 jobs, AS003 a result over 1 MiB.';

create or replace function ai.fail_job(job_id bigint, fencing_token bigint, error text, retry_in interval default null)
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

create or replace function ai.release_job(job_id bigint, fencing_token bigint) returns ai.agent_jobs
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

create or replace function ai.cancel_job(job_id bigint) returns ai.agent_jobs
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
  'Cancels a PENDING, IN_PROGRESS or AWAITING_HUMAN job and returns it; a worker still running it loses its lease (its next fenced call raises AS006). A job that waited for a person has its approval cancelled and its session active again (a trigger, so a raw UPDATE to CANCELLED does the same). Tenants may cancel their own jobs. AS001 unknown job (or another tenant''s), AS004 job already finished.';

create or replace function ai.retry_dead_job(job_id bigint) returns ai.agent_jobs
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

create or replace function ai.get_job(job_id bigint) returns ai.agent_jobs
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

create or replace function ai.job_attempts(job_id bigint)
returns table (attempt integer, worker text, fencing_token bigint, claimed_at timestamptz,
               lease_expires_at timestamptz, ended_at timestamptz, outcome text, error text)
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  j record;
begin
  select x.job_id, x.status, x.attempts, x.lease_owner, x.fencing_token, x.claimed_at, x.lease_expires_at, x.attempt_log
  into j from ai.agent_jobs x where x.job_id = job_attempts.job_id;
  if not found then
    select x.job_id, x.status, x.attempts, x.lease_owner, x.fencing_token, x.claimed_at, x.lease_expires_at, x.attempt_log
    into j from ai.agent_jobs_archive x where x.job_id = job_attempts.job_id;
    if not found then
      raise exception using errcode = 'AS001', message = format('job %s not found', job_attempts.job_id);
    end if;
  end if;
  return query
    select (e.v ->> 'attempt')::integer, e.v ->> 'worker', (e.v ->> 'fencing_token')::bigint,
           (e.v ->> 'claimed_at')::timestamptz, (e.v ->> 'lease_expires_at')::timestamptz,
           (e.v ->> 'ended_at')::timestamptz, e.v ->> 'outcome', e.v ->> 'error'
    from pg_catalog.jsonb_array_elements(j.attempt_log) with ordinality as e(v, n)
    order by e.n;
  if j.status = 'IN_PROGRESS' then
    -- the attempt running now (its lease may have ended: the next claim or a reap records that)
    return query select j.attempts, j.lease_owner, j.fencing_token, j.claimed_at, j.lease_expires_at,
                        null::timestamptz, 'in_progress'::text, null::text;
  end if;
end
$$;
comment on function ai.job_attempts(bigint) is
  'The attempts of a job, oldest first: attempt number, worker, fencing token, claimed at, lease end, ended at, outcome (completed, failed, released, cancelled, awaiting_human, expired, or in_progress for the one running) and error (a failed attempt''s). Reads archived jobs too. Each ended attempt was recorded by the transaction that ended it. AS001 unknown job, or another tenant''s.';

create or replace function ai.queue_stats(queue text default null)
returns setof ai.queue_stats_row
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
         v_now - min(j.run_at) filter (where j.status = 'PENDING' and j.run_at <= v_now),
         coalesce(sum(pg_catalog.jsonb_array_length(pg_catalog.jsonb_path_query_array(
           j.attempt_log, '$[*] ? (@.outcome == "failed")'))) filter (where j.attempt_log <> '[]'), 0)::bigint,
         coalesce(sum(pg_catalog.jsonb_array_length(pg_catalog.jsonb_path_query_array(
           j.attempt_log, '$[*] ? (@.outcome == "expired")'))) filter (where j.attempt_log <> '[]'), 0)::bigint
  from ai.agent_jobs j
  where queue_stats.queue is null or j.queue = queue_stats.queue
  group by j.queue
  order by j.queue;
end
$$;
comment on function ai.queue_stats(text) is
  'Per queue (or only the one named): jobs per status, PENDING jobs due now, IN_PROGRESS jobs whose lease expired, the age of the oldest due job, and the attempts of its jobs (not yet archived) that failed and whose lease expired (retries and reclaims). RLS applies: a tenant counts its own jobs, a service acting for nobody counts all.';

create or replace function ai.reap_expired(queue text default null) returns integer
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

create or replace function ai.archive_jobs(older_than interval default '1 day', max_rows integer default 10000)
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
  ai.fail_job(bigint, bigint, text, interval), ai.release_job(bigint, bigint), ai.cancel_job(bigint), ai.retry_dead_job(bigint), ai.get_job(bigint), ai.job_attempts(bigint),
  ai.queue_stats(text), ai.reap_expired(text), ai.archive_jobs(interval, integer), ai.queue_channel(text),
  ai._written_here(xid)
from public;
grant execute on function ai.enqueue_job(text, jsonb, text, timestamptz, integer, integer, text),
  ai.cancel_job(bigint), ai.get_job(bigint), ai.job_attempts(bigint), ai.queue_stats(text)
to ai_user, ai_service;
grant execute on function ai.claim_job(text, interval, text), ai.claim_jobs(text, interval, text, integer),
  ai.renew_lease(bigint, bigint, interval), ai.fenced_write(bigint, bigint),
  ai.complete_job(bigint, bigint, jsonb), ai.complete_jobs(bigint[], bigint[], jsonb[]),
  ai.fail_job(bigint, bigint, text, interval), ai.release_job(bigint, bigint), ai.retry_dead_job(bigint),
  ai.reap_expired(text), ai.archive_jobs(interval, integer), ai.queue_channel(text)
to ai_service;

commit;
