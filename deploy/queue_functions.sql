-- Deploy agent-state:queue_functions to pg
-- Reworked after v0.1.0; the tagged script is deploy/queue_functions@v0.1.0.sql.
-- requires: queue
-- requires: sessions_functions
-- requires: hot_renewals
-- requires: job_deadlines
--
-- The functions and triggers of queue (its tables, indexes and row rules:
-- deploy/queue.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework queue_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

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
      -- a lease that ran out at the attempt's deadline (claimed_at + timeout, or the total
      -- deadline: no lease reaches past it) is a deadline exceeded, not a holder gone quiet
      when old.lease_expires_at <= new.updated_at
           and old.lease_expires_at >= least(old.claimed_at + old.timeout, old.deadline) then 'deadline_exceeded'
      when new.status = 'IN_PROGRESS' or old.lease_expires_at <= new.updated_at then 'expired'
      -- given back: due later is a snooze (ai.snooze_job), due now a release
      when new.status = 'PENDING' and new.attempts < old.attempts then
        case when new.run_at > new.updated_at then 'snoozed' else 'released' end
      else 'failed' end,
    case when new.status in ('PENDING', 'FAILED') and old.lease_expires_at > new.updated_at
              and new.attempts >= old.attempts then new.last_error
         when new.status not in ('CANCELLED', 'AWAITING_HUMAN') and old.lease_expires_at <= new.updated_at
              and old.lease_expires_at >= least(old.claimed_at + old.timeout, old.deadline) then 'deadline exceeded' end);
  return new;
end
$$;
comment on function ai._log_attempt() is 'Internal trigger: appends the attempt an UPDATE ends to the job''s attempt_log (outcome failed, released, snoozed, cancelled, awaiting_human, expired, or deadline_exceeded for a lease that ran out at the attempt''s deadline; a completion writes its own entry).';
revoke execute on function ai._log_attempt() from public;  -- a trigger needs no grant
revoke execute on function ai._attempt_entry(integer, text, bigint, timestamptz, timestamptz, timestamptz, text, text) from public;

-- Replaced only when it differs from this definition (as pg_get_triggerdef prints it): CREATE OR
-- REPLACE TRIGGER locks the table against every writer (SHARE ROW EXCLUSIVE) and queues behind any
-- open transaction that wrote to it, so a deploy over an unchanged trigger takes no table lock; a
-- changed one waits at most lock_timeout (docs/operations.md, "Upgrading under a live fleet").
do $do$
begin
  if (select pg_catalog.pg_get_triggerdef(t.oid) from pg_catalog.pg_trigger t
      where t.tgrelid = 'ai.agent_jobs'::pg_catalog.regclass and t.tgname = 'agent_jobs_attempt_ended')
     is distinct from $t$CREATE TRIGGER agent_jobs_attempt_ended BEFORE UPDATE ON ai.agent_jobs FOR EACH ROW WHEN (((old.status = 'IN_PROGRESS'::text) AND (new.status <> 'COMPLETED'::text) AND ((new.status <> 'IN_PROGRESS'::text) OR (new.fencing_token <> old.fencing_token)))) EXECUTE FUNCTION ai._log_attempt()$t$ then
    if pg_catalog.current_setting('lock_timeout') = '0' then
      perform pg_catalog.set_config('lock_timeout', '5s', true);
    end if;
    create or replace trigger agent_jobs_attempt_ended
      before update on ai.agent_jobs
      for each row
      when (old.status = 'IN_PROGRESS' and new.status <> 'COMPLETED'
            and (new.status <> 'IN_PROGRESS' or new.fencing_token <> old.fencing_token))
      execute function ai._log_attempt();
  end if;
end
$do$;

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

-- Replaced only when it differs from this definition (as pg_get_triggerdef prints it): CREATE OR
-- REPLACE TRIGGER locks the table against every writer (SHARE ROW EXCLUSIVE) and queues behind any
-- open transaction that wrote to it, so a deploy over an unchanged trigger takes no table lock; a
-- changed one waits at most lock_timeout (docs/operations.md, "Upgrading under a live fleet").
do $do$
begin
  if (select pg_catalog.pg_get_triggerdef(t.oid) from pg_catalog.pg_trigger t
      where t.tgrelid = 'ai.agent_jobs'::pg_catalog.regclass and t.tgname = 'agent_jobs_status_moved')
     is distinct from $t$CREATE TRIGGER agent_jobs_status_moved AFTER UPDATE OF status ON ai.agent_jobs FOR EACH ROW WHEN ((NOT (new.lease_owner IS DISTINCT FROM old.lease_owner))) EXECUTE FUNCTION ai._job_status_moved()$t$ then
    if pg_catalog.current_setting('lock_timeout') = '0' then
      perform pg_catalog.set_config('lock_timeout', '5s', true);
    end if;
    create or replace trigger agent_jobs_status_moved
      after update of status on ai.agent_jobs
      for each row
      when (new.lease_owner is not distinct from old.lease_owner)
      execute function ai._job_status_moved();
  end if;
end
$do$;

-- No table privilege for ai_user or ai_service: they reach this table only through the functions,
-- which run as the schema owner (SECURITY DEFINER; docs/security.md).

-- ---------------------------------------------------------------------------------------------
-- Leases and database outages
--
-- A lease is measured on the database's clock, which runs while nobody can reach the database: a
-- holder cannot renew or complete while the server is down or restarting, so an outage longer than
-- what was left of a lease would hand every job in flight to the next claim, though each holder
-- would have finished it. So a lease does not end during an outage: a lease renewed (or claimed)
-- before the server started (pg_postmaster_start_time(), or a promotion: below; ai._server_start)
-- that had not ended more than five minutes before that start still holds for the first 30 seconds
-- after the start, whatever its expiry. Its holder reconnects in that time and renews, completes or
-- fails it with its token as if nothing had happened; a holder that does not come back loses the
-- job 30 seconds after the start (the next claim takes it, counting an attempt, as for any expired
-- lease). A lease that ended more than five minutes before the start (an outage that long, or a
-- holder that was gone before it) gets nothing. A lease renewed after the start is an ordinary
-- lease. Every test of a lease (the claims, renew_lease(s), fenced_write and its commit check,
-- complete_job(s), fail_job, release_job, reap_expired) is ai._lease_held, so none disagrees. The
-- fence is unchanged: a claim bumps the token, and a zombie's call under the old token is refused,
-- grace or not.
--
-- A promotion counts as a start. A standby promoted after its primary died keeps its own start
-- time (long before the failover), and Postgres records no promotion time a function may read; but
-- a promotion (or a point-in-time recovery) begins a new timeline, which any role reads
-- (pg_walfile_name(pg_current_wal_lsn())). The first lease call on a timeline -- a claim, a
-- renewal, a completion, a reap: whichever comes first -- writes when it came to
-- ai.lease_timelines (deploy/lease_timelines.sql), and "the start" above is the later of the
-- server's start and that first call. The leases replicated from the old primary were all renewed
-- before it, so one that ran out during the failover (not more than five minutes before that first
-- call) holds for 30 seconds after it, as after a restart; a renewal the old primary took but did
-- not replicate did not happen, as far as the new one knows. Claims and renewals read the start
-- before they write a lease, so a lease renewed on the new timeline is always an ordinary one. The
-- cost: one lookup in a table of a few rows per claim, renewal or reap (ai._server_start, about
-- 15 us a call); a completion, a fail, a release and the fence read it only for a lease that has
-- already ended (the left side of their "lease_expires_at > now or ai._lease_held(...)").

-- When the lease clock started: the later of the server's start (pg_postmaster_start_time()) and
-- the first lease call on the cluster's current timeline (ai.lease_timelines; a promotion begins a
-- timeline), the row of a new timeline written by the call that finds it missing. A standby in
-- recovery (a read there, ai.queue_stats) has no timeline of its own yet: the server's start. A
-- read-only transaction that finds no row writes none: its start is now. For a test, the settings
-- ai.frozen_server_start and ai.frozen_timeline stand for the start and the timeline, under the
-- same rule as ai.frozen_now (deploy/clock.sql): only a role that may freeze the clock moves them.
-- Evaluated once per call of the functions that test a lease (into v_start), never per row, and
-- before the call reads the clock (v_now) for a lease it writes: the first call on a timeline
-- writes its own ai.now() (a clock_timestamp()), so the lease it claims or renews comes after the
-- start and is an ordinary one. Two first calls racing: the second waits for the first's row (on
-- conflict do nothing), then reads it. Not kept in a session setting to save the lookup: anyone may
-- set a setting, and only a role that may freeze the clock may move the start.
create or replace function ai._server_start() returns timestamptz
language plpgsql volatile
as $$
declare
  v_start timestamptz := pg_catalog.pg_postmaster_start_time();
  v_timeline integer;
  v_first timestamptz;
  v_frozen text := pg_catalog.current_setting('ai.frozen_server_start', true);
  v_frozen_timeline text := pg_catalog.current_setting('ai.frozen_timeline', true);
begin
  -- the settings count only for a role that may freeze the clock; the check only when one is set
  if (coalesce(v_frozen, '') <> '' or coalesce(v_frozen_timeline, '') <> '')
     and not coalesce(pg_catalog.pg_has_role(
                        case when pg_catalog.current_setting('role') operator(pg_catalog.=) 'none'
                             then session_user
                             else pg_catalog.current_setting('role')::pg_catalog.name end,
                        pg_catalog.to_regrole('ai_test_clock'), 'MEMBER'), false) then
    v_frozen := null;
    v_frozen_timeline := null;
  end if;
  if coalesce(v_frozen, '') <> '' then
    v_start := v_frozen::pg_catalog.timestamptz;
  end if;
  if coalesce(v_frozen_timeline, '') <> '' then
    v_timeline := v_frozen_timeline::integer;
  elsif pg_catalog.pg_is_in_recovery() then
    return v_start;
  else
    -- the timeline: the first 8 hex digits of the WAL file being written
    v_timeline := ('x' operator(pg_catalog.||)
                   pg_catalog.substr(pg_catalog.pg_walfile_name(pg_catalog.pg_current_wal_lsn()), 1, 8))::bit(32)::integer;
  end if;
  select t.first_seen into v_first from ai.lease_timelines t where t.timeline = v_timeline;
  if not found then
    if pg_catalog.current_setting('transaction_read_only') = 'on' then
      return greatest(v_start, ai.now());
    end if;
    insert into ai.lease_timelines as t (timeline, first_seen) values (v_timeline, ai.now())
    on conflict (timeline) do nothing
    returning t.first_seen into v_first;
    if v_first is null then
      select t.first_seen into v_first from ai.lease_timelines t where t.timeline = v_timeline;
    end if;
  end if;
  return greatest(v_start, coalesce(v_first, ai.now()));
end
$$;
comment on function ai._server_start() is
  'Internal: when the lease clock started: the later of the server''s start (pg_postmaster_start_time()) and the first lease call on the current timeline (ai.lease_timelines, written by the first call; a promotion begins a timeline); the settings ai.frozen_server_start and ai.frozen_timeline for a role that may freeze the clock (tests).';
revoke execute on function ai._server_start() from public;

-- Whether a lease still holds at now (the rule above): it has not ended, or it was renewed before
-- the server started at started, had not ended five minutes before that, and now is within 30
-- seconds of the start. A plain SQL expression: it inlines into each statement that tests a lease.
create or replace function ai._lease_held(lease_expires_at timestamptz, renewed_at timestamptz, now timestamptz,
                                          started timestamptz) returns boolean
language sql stable parallel safe
as $$
  select lease_expires_at operator(pg_catalog.>) now
         or (now operator(pg_catalog.<) (started operator(pg_catalog.+) '30 seconds'::pg_catalog.interval)
             and renewed_at operator(pg_catalog.<) started
             and lease_expires_at operator(pg_catalog.>) (started operator(pg_catalog.-) '5 minutes'::pg_catalog.interval))
$$;
comment on function ai._lease_held(timestamptz, timestamptz, timestamptz, timestamptz) is
  'Internal: whether a lease (its expiry, and when it was last claimed or renewed) holds at now for a server started at started: not ended, or, within 30 seconds of the start, renewed before it and ended less than five minutes before it (a database outage does not count against a lease).';
revoke execute on function ai._lease_held(timestamptz, timestamptz, timestamptz, timestamptz) from public;

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
-- checkpoint) makes a claim skip the thread for that moment. claim_job and claim_jobs write it
-- in their query (a function call per row costs; 0.1.0's ai._lock_thread, which nothing called,
-- is dropped at the end of this script).

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
  set attempts = j.attempts - 1,
      last_error = case when j.attempt_log -> -1 ->> 'outcome' = 'deadline_exceeded'
                        then format('deadline exceeded: attempt %s ran out of time', j.attempts - 1)
                        else format('the lease of attempt %s expired', j.attempts - 1) end,
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

-- The guards of an enqueue, shared by enqueue_job and enqueue_jobs (deploy/enqueue_jobs.sql): its
-- arguments (AS002, AS003 a payload over 1 MiB) ...
create or replace function ai._check_enqueue(thread_id text, payload jsonb, queue text, priority integer,
                                             max_attempts integer, idempotency_key text) returns void
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
begin
  perform ai._check_thread_id(_check_enqueue.thread_id);
  perform ai._check_document(_check_enqueue.payload, 'payload');
  perform ai._check_text(_check_enqueue.queue, 'queue');
  if _check_enqueue.priority is null then
    raise exception using errcode = 'AS002', message = 'priority must not be NULL';
  end if;
  if _check_enqueue.max_attempts is null or _check_enqueue.max_attempts < 1 then
    raise exception using errcode = 'AS002',
      message = format('max_attempts must be at least 1, not %s', coalesce(_check_enqueue.max_attempts::text, 'NULL'));
  end if;
  if _check_enqueue.idempotency_key is not null then
    perform ai._check_text(_check_enqueue.idempotency_key, 'idempotency_key');
  end if;
end
$$;
comment on function ai._check_enqueue(text, jsonb, text, integer, integer, text) is
  'Internal guard of enqueue_job and enqueue_jobs: raises AS002 for a bad argument and AS003 for a payload over 1 MiB.';

-- ... and its session: the owner of the thread, seen through the caller's row level security
-- (AS001 for an unknown thread and another tenant's alike), which must still take jobs (AS004).
create or replace function ai._enqueue_owner(thread_id text) returns text
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_owner text;
  v_status text;
begin
  select s.owner, s.status into v_owner, v_status from ai.agent_sessions s where s.thread_id = _enqueue_owner.thread_id;
  if not found then
    raise exception using errcode = 'AS001', message = format('thread %s not found', _enqueue_owner.thread_id);
  end if;
  if v_status not in ('active', 'waiting') then
    raise exception using errcode = 'AS004',
      message = format('session %s is %s: no more jobs', _enqueue_owner.thread_id, v_status);
  end if;
  return v_owner;
end
$$;
comment on function ai._enqueue_owner(text) is
  'Internal guard of enqueue_job and enqueue_jobs: the owner of a session that takes jobs; AS001 unknown (or another tenant''s) thread, AS004 finished session.';

-- headers (change job_headers): what the enqueuer hands to the run, e.g. its W3C trace context
-- (docs/observability.md, "Traces"); a JSON object of strings of at most 8 KiB, or NULL.
create or replace function ai._check_headers(headers jsonb) returns void
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
begin
  if _check_headers.headers is not null
     and (pg_catalog.jsonb_typeof(_check_headers.headers) <> 'object'
          or pg_catalog.octet_length(_check_headers.headers::text) > 8192
          or exists (select from pg_catalog.jsonb_each(_check_headers.headers) e (k, v)
                     where pg_catalog.jsonb_typeof(e.v) <> 'string')) then
    raise exception using errcode = 'AS002',
      message = 'headers must be a JSON object of string values, at most 8192 bytes, or NULL';
  end if;
end
$$;
comment on function ai._check_headers(jsonb) is
  'Internal guard of enqueue_job and enqueue_jobs: headers must be NULL or a JSON object of string values of at most 8192 bytes (AS002).';

-- The 7-argument enqueue_job of 0.1.0 is replaced by the one with deadlines and headers (the same call works).
drop function if exists ai.enqueue_job(text, jsonb, text, timestamptz, integer, integer, text);
create or replace function ai.enqueue_job(
  thread_id text, payload jsonb default '{}', queue text default 'default', run_at timestamptz default null,
  priority integer default 0, max_attempts integer default 5, idempotency_key text default null,
  timeout interval default null, deadline timestamptz default null, start_by timestamptz default null,
  key text default null, headers jsonb default null)
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
  a_job_key alias for $11;
  v_now timestamptz := ai.now();
  v_run_at timestamptz := coalesce(enqueue_job.run_at, v_now);
  v_timeout interval;
  v_after interval;
  v_within interval;
  v_owner text;
  v_job_key text;
  j ai.agent_jobs;
begin
  perform ai._check_enqueue(a_thread_id, a_payload, a_queue, enqueue_job.priority, enqueue_job.max_attempts, a_key);
  if enqueue_job.timeout is not null or enqueue_job.deadline is not null or enqueue_job.start_by is not null then
    perform ai._check_deadlines(v_run_at, enqueue_job.timeout, enqueue_job.deadline, enqueue_job.start_by);
  end if;
  perform ai._check_headers(enqueue_job.headers);
  v_owner := ai._enqueue_owner(a_thread_id);
  -- the queue's defaults for the deadlines not given (ai.set_queue_deadlines)
  select d.timeout, d.deadline_after, d.start_within into v_timeout, v_after, v_within
  from ai.queue_deadlines d where d.queue = a_queue;
  v_job_key := ai._job_key(a_job_key, v_owner);

  -- a job due now takes its place in the fair order (deploy/job_keys.sql); one given a run_at,
  -- when a claim finds it due (ai._activate_due)
  insert into ai.agent_jobs (thread_id, owner, queue, payload, priority, run_at, max_attempts,
                             idempotency_key, created_at, updated_at, timeout, deadline, start_by, headers, key, vtime)
  values (a_thread_id, v_owner, a_queue, a_payload, enqueue_job.priority, v_run_at,
          enqueue_job.max_attempts, a_key, v_now, v_now, coalesce(enqueue_job.timeout, v_timeout),
          coalesce(enqueue_job.deadline, v_run_at + v_after), coalesce(enqueue_job.start_by, v_run_at + v_within),
          enqueue_job.headers, v_job_key,
          case when enqueue_job.run_at is null
               then ai._fair_base(a_queue, v_job_key, enqueue_job.priority, v_now) + ai._key_step(a_queue, v_job_key) end)
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
comment on function ai.enqueue_job(text, jsonb, text, timestamptz, integer, integer, text, interval, timestamptz, timestamptz, text, jsonb) is
  'Enqueues a job for a thread (owned by the session''s owner) and returns it, PENDING. run_at NULL means now. A non-NULL idempotency_key is unique per owner and queue: enqueuing it again returns the first job unchanged. Deadlines (NULL: the queue''s default, ai.set_queue_deadlines, else none): timeout, each attempt''s run timeout (no lease reaches past claimed_at + timeout); deadline, the total deadline across attempts (past it a claim ends the job FAILED, "deadline exceeded"); start_by, the start deadline (a job not started by then is ended FAILED, "start deadline passed"). key is the job''s fairness and limit key (1 to 255 characters, not starting with @; NULL: the owner''s own key, ''@'' and the owner): claims share a queue fairly between keys by their weights and hold each key to its limits (ai.set_job_key); a job due now takes its place in the fair order at once, one given a run_at when it is due. headers: what the enqueuer hands to the run (a JSON object of strings, at most 8 KiB; the clients put the W3C traceparent and tracestate of the current trace there), NULL for none. Sends pg_notify(ai.queue_channel(queue), '''') when the job is due now (Postgres folds them to one per transaction and queue). AS001 unknown thread, AS002 bad argument (a timeout not positive, a deadline not after run_at, a start_by before it, a key empty, over 255 characters or starting with @, headers not an object of strings or over 8 KiB), AS003 payload over 1 MiB, AS004 session finished.';

-- ---------------------------------------------------------------------------------------------
-- Fair shares and limits per key (deploy/job_keys.sql says how; docs/queue.md, "Fair shares and
-- limits"). The helpers below are the whole of it: a job's key, its virtual time, the activation
-- of jobs given a due time, and the admission of the jobs a claim picked under their keys' limits.

-- The key a job gets: the one it names, else '@' and the owner (a named key never starts with '@').
create or replace function ai._job_key(key text, owner text) returns text
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
begin
  if _job_key.key is null then
    return '@' operator(pg_catalog.||) _job_key.owner;
  end if;
  if _job_key.key = '' or pg_catalog.char_length(_job_key.key) > 255 or pg_catalog.left(_job_key.key, 1) = '@' then
    perform ai._check_text(_job_key.key, 'key');
    raise exception using errcode = 'AS002',
      message = format('key %s starts with @: such keys are the tenants'' own (leave key NULL)', _job_key.key);
  end if;
  return _job_key.key;
end
$$;
comment on function ai._job_key(text, text) is
  'Internal: the fairness and limit key of a job: key, or ''@'' and the owner when key is NULL. AS002 for an empty key, one over 255 characters or one starting with @.';

-- Where a key's next job goes in the fair order of a queue: after the key's last PENDING job
-- (agent_jobs_key_pending; for a tenant, its own jobs of the key), and no earlier than where the
-- claims have got to (ai.queue_clocks, which ai._advance_clock moves). Two index probes.
create or replace function ai._fair_base(queue text, key text, priority integer, now timestamptz)
returns double precision
language sql stable
set search_path = pg_catalog, pg_temp
as $$
  select greatest(
    (select t.vtime from ai.agent_jobs t
     where t.queue = _fair_base.queue and t.key = _fair_base.key and t.status = 'PENDING' and t.vtime is not null
     order by t.vtime desc limit 1),
    (select c.vtime from ai.queue_clocks c where c.queue = _fair_base.queue),
    0)
$$;
comment on function ai._fair_base(text, text, integer, timestamptz) is
  'Internal: the virtual time a key''s next job of a queue follows: the larger of the key''s last PENDING job''s vtime and the queue''s clock (0 when neither).';

-- A claim moves its queue's clock to the vtime of the last job it took in fair order, when that is
-- more than 4 steps ahead; it never waits: a clock row another claimer holds is left to it.
create or replace function ai._advance_clock(queue text, vtime double precision) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_at double precision;
begin
  select c.vtime into v_at from ai.queue_clocks c where c.queue = _advance_clock.queue;
  if not found then
    insert into ai.queue_clocks as c (queue, vtime) values (_advance_clock.queue, _advance_clock.vtime)
    on conflict (queue) do nothing;
  elsif _advance_clock.vtime > v_at + 4 then
    perform from ai.queue_clocks c where c.queue = _advance_clock.queue for no key update skip locked;
    if found then
      update ai.queue_clocks c set vtime = greatest(c.vtime, _advance_clock.vtime) where c.queue = _advance_clock.queue;
    end if;
  end if;
end
$$;
comment on function ai._advance_clock(text, double precision) is
  'Internal: moves a queue''s clock (ai.queue_clocks) to vtime when it is more than 4 steps ahead, without waiting for a claimer that holds the row.';

-- 1 / the key's weight (ai.job_keys; 1 without a row).
create or replace function ai._key_step(queue text, key text) returns double precision
language sql stable
set search_path = pg_catalog, pg_temp
as $$
  select coalesce((select 1 / k.weight from ai.job_keys k where k.queue = _key_step.queue and k.key = _key_step.key), 1)
$$;
comment on function ai._key_step(text, text) is 'Internal: how far apart in virtual time a key''s jobs are: 1 / its weight (1 without a row in ai.job_keys).';

-- A job given a due time (run_at) enters the fair order when it is due: the claim gives up to a
-- hundred of the queue's due ones (oldest run_at first) their key and vtime, per key in run_at
-- order, as enqueues at that moment would. Rows another claimer is activating are skipped.
create or replace function ai._activate_due(queue text, now timestamptz) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  with due as (
    select c.job_id, coalesce(c.key, '@' operator(pg_catalog.||) c.owner) as key, c.priority, c.run_at
    from ai.agent_jobs c
    where c.status = 'PENDING' and c.vtime is null and c.queue = _activate_due.queue and c.run_at <= _activate_due.now
    order by c.run_at, c.job_id
    limit 100
    for update skip locked
  ), ranked as (
    select d.job_id, d.key, d.priority,
           pg_catalog.row_number() over (partition by d.key, d.priority order by d.run_at, d.job_id) as n
    from due d
  ), bases as (
    select g.key, g.priority, ai._fair_base(_activate_due.queue, g.key, g.priority, _activate_due.now) as base,
           ai._key_step(_activate_due.queue, g.key) as step
    from (select distinct r.key, r.priority from ranked r) g
  )
  update ai.agent_jobs u
  set key = r.key, vtime = b.base + r.n * b.step
  from ranked r join bases b on b.key = r.key and b.priority = r.priority
  where u.job_id = r.job_id;
end
$$;
comment on function ai._activate_due(text, timestamptz) is
  'Internal: gives up to 100 due PENDING jobs of a queue that have no vtime yet (enqueued with a run_at) their key and their place in the fair order.';

-- Admission: of the jobs a claim picked (in claim order), those their keys' limits let it take.
-- Per limited key (a row of ai.job_keys with max_in_flight or rate_per_minute), in key order: its
-- row locked FOR NO KEY UPDATE SKIP LOCKED (a key another claimer is admitting is left to it, so
-- no claimer waits and two never both count the same free slots), its running jobs whose lease
-- holds counted (agent_jobs_in_flight) with those this claim took in an earlier round (taken),
-- its bucket refilled (rate_per_minute / 60 tokens a second, at most burst) and spent, one token
-- a job. The row lock lasts until the claim commits, so the next claimer counts these jobs.
create or replace function ai._admit(queue text, job_ids bigint[], taken bigint[], now timestamptz, start timestamptz)
returns bigint[]
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  r record;
  k ai.job_keys;
  v_ids bigint[];
  v_drop bigint[] := '{}'::bigint[];
  v_allow integer;
  v_burst double precision;
  v_tokens double precision;
begin
  for r in
    select l.key from ai.job_keys l
    where l.queue = _admit.queue
      and l.key = any (array(select distinct j.key from ai.agent_jobs j where j.job_id = any (_admit.job_ids)))
      and (l.max_in_flight is not null or l.rate_per_minute is not null)
    order by l.key
  loop
    select pg_catalog.array_agg(x.id order by x.ord) into v_ids
    from pg_catalog.unnest(_admit.job_ids) with ordinality x (id, ord)
    join ai.agent_jobs j on j.job_id = x.id
    where j.key = r.key;
    select l.* into k from ai.job_keys l where l.queue = _admit.queue and l.key = r.key for no key update skip locked;
    if not found then
      v_drop := v_drop operator(pg_catalog.||) v_ids;  -- another claimer is admitting this key
      continue;
    end if;
    v_allow := pg_catalog.cardinality(v_ids);
    if k.max_in_flight is not null then
      v_allow := least(v_allow, k.max_in_flight
        - (select pg_catalog.count(*) from ai.agent_jobs c
           where c.queue = _admit.queue and c.key = r.key and c.status = 'IN_PROGRESS'
             and c.job_id <> all (_admit.job_ids)
             and ai._lease_held(c.lease_expires_at, c.updated_at, _admit.now, _admit.start))::integer
        - (select pg_catalog.count(*) from ai.agent_jobs t
           where t.job_id = any (_admit.taken) and t.key = r.key)::integer);
    end if;
    if k.rate_per_minute is not null then
      v_burst := coalesce(k.burst, greatest(1, pg_catalog.ceil(k.rate_per_minute / 60)));
      v_tokens := least(v_burst, coalesce(k.tokens, v_burst)
        + k.rate_per_minute / 60 * greatest(0, extract(epoch from _admit.now - coalesce(k.refilled_at, _admit.now))));
      v_allow := greatest(0, least(v_allow, pg_catalog.floor(v_tokens)::integer));
      update ai.job_keys l set tokens = v_tokens - v_allow, refilled_at = _admit.now
      where l.queue = _admit.queue and l.key = r.key;
    end if;
    v_allow := greatest(v_allow, 0);
    v_drop := v_drop operator(pg_catalog.||) v_ids[v_allow + 1:];
  end loop;
  if pg_catalog.cardinality(v_drop) = 0 then
    return _admit.job_ids;
  end if;
  return array(select x.id from pg_catalog.unnest(_admit.job_ids) with ordinality x (id, ord)
               where x.id <> all (v_drop) order by x.ord);
end
$$;
comment on function ai._admit(text, bigint[], bigint[], timestamptz, timestamptz) is
  'Internal: of the jobs a claim picked, in claim order, those their keys'' limits admit (max_in_flight against the running jobs whose lease holds and those taken earlier in the claim; the token bucket of rate_per_minute, burst, refilled and spent); a limited key whose row another claimer holds admits none.';


-- ---------------------------------------------------------------------------------------------
-- Dead workers
--
-- A worker that died (SIGKILL, OOM, a lost machine) held its jobs until their leases ran out:
-- a minute with the default lease. Postgres knows sooner: a session's locks go when its
-- connection goes. A Worker keeps one liveness hold, a session advisory lock keyed by its
-- worker_id (class ai._liveness_class(), key hashtext(worker_id)), on a direct connection it keeps
-- open (ai.hold_worker_liveness; ai.queue_workers.live records that it does). A claim of
-- claim_jobs that has room left after the due jobs and the expired leases looks for live workers
-- whose lock is free (ai._dead_workers: tried in shared mode and let go at once, so nothing
-- waits) and has been for half a second (a worker whose liveness connection alone was closed
-- takes its hold again sooner), and takes their running jobs over as it takes an expired lease:
-- a new token (the dead worker, if it was not dead, is fenced out), an attempt counted. Never its
-- own: a worker that claims is alive. Only a claim with room looks
-- (a full claim pays nothing): the jobs of a dead worker come after the jobs due before its death,
-- as a lease that ended then would. A worker alive but slow, even stopped (SIGSTOP), keeps its
-- connection and its lock: its jobs keep their lease. A worker whose network is cut keeps its lock
-- until the server notices the connection is gone (TCP keepalives: tcp_keepalives_idle and
-- friends decide when); until then its lease holds, and after that its jobs are taken over and its
-- late writes fenced out. A worker whose liveness connection alone is closed by the server (an
-- operator's pg_terminate_backend) counts as dead until it takes its hold again: its jobs may be
-- taken over meanwhile, and the fence refuses what it writes after that. Not through a
-- transaction pooler: there a session lock stays on a server connection that other clients
-- share (the Worker takes no hold there, and the lease alone decides). For 30 seconds after the
-- server starts (or the first call on a promoted standby) nobody holds a lock yet (the workers
-- are reconnecting): the leases decide then ("Leases and database outages").

-- The advisory-lock class of the liveness holds (the first key of the two-key form).
create or replace function ai._liveness_class() returns integer
language sql immutable parallel safe
as $$
  select 1095522636  -- 'ASWL' as a 32-bit integer: agent-state worker liveness
$$;
comment on function ai._liveness_class() is 'Internal: the advisory-lock class (first key) of the workers'' liveness holds.';
revoke execute on function ai._liveness_class() from public;

create or replace function ai.hold_worker_liveness(worker_id text) returns boolean
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  perform ai._check_text(hold_worker_liveness.worker_id, 'worker_id');
  -- the session's own lock, held until its connection ends (or release_worker_liveness); a claim
  -- that looks at it holds it in shared mode for a moment: wait that long, not for another holder
  perform pg_catalog.set_config('lock_timeout', '200ms', true);
  begin
    perform pg_catalog.pg_advisory_lock(ai._liveness_class(), pg_catalog.hashtext(hold_worker_liveness.worker_id));
  exception when lock_not_available then
    return false;  -- another session holds it: the same worker_id twice
  end;
  -- the registry (ai.list_workers): started now unless this is the same run taking its hold again
  -- on a new connection (it was live and did not stop)
  insert into ai.queue_workers as w (worker_id, live, seen_at, started_at, client_addr)
  values (hold_worker_liveness.worker_id, true, ai.now(), ai.now(), pg_catalog.inet_client_addr()::text)
  on conflict (worker_id) do update
  set live = true, free_since = null, seen_at = excluded.seen_at, stopped_at = null, client_addr = excluded.client_addr,
      started_at = case when w.live and w.stopped_at is null and w.started_at is not null then w.started_at
                        else excluded.started_at end;
  return true;
end
$$;
comment on function ai.hold_worker_liveness(text) is
  'Takes the liveness hold of worker_id for this session (a session advisory lock, kept until the connection ends) and records that the worker keeps one: from then on, a claim (claim_jobs) that finds the hold free takes the worker''s running jobs over at once, whatever their lease. Call it on a direct (or session-pooled) connection the worker keeps open, before it claims; never through a transaction pooler. Returns false when another session holds it (the same worker_id twice). For ai_service. AS002 bad worker_id.';

create or replace function ai.release_worker_liveness(worker_id text) returns void
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_now timestamptz := ai.now();
begin
  perform ai._check_text(release_worker_liveness.worker_id, 'worker_id');
  update ai.queue_workers w set live = false, seen_at = v_now, stopped_at = v_now
  where w.worker_id = release_worker_liveness.worker_id;
  perform pg_catalog.pg_advisory_unlock(ai._liveness_class(), pg_catalog.hashtext(release_worker_liveness.worker_id));
end
$$;
comment on function ai.release_worker_liveness(text) is
  'A worker that stops cleanly gives up its liveness hold: it no longer counts as a live worker (its jobs, if it still held any, keep their lease). For ai_service. AS002 bad worker_id.';

-- The live workers whose liveness hold has been free for half a second: dead. Each hold is tried
-- in shared mode and let go at once (a session lock, not a transaction's: a claim keeps nothing).
-- The first claim that finds a hold free notes when (free_since, on the server's clock, not
-- ai.now(): it measures how long a connection has been gone); hold_worker_liveness clears it. So
-- a worker whose liveness connection alone was closed, and that takes its hold again within half
-- a second, is never taken for dead. A worker_id whose hash collides with a live one's looks
-- alive: the lease decides for it, as before.
-- (PL/pgSQL: ai.queue_workers is planned after this change, and a SQL body is checked when made.)
create or replace function ai._dead_workers() returns text[]
language plpgsql volatile
as $$
declare
  v_clock timestamptz := pg_catalog.clock_timestamp();
  v_free text[];
  v_dead text[];
begin
  select coalesce(pg_catalog.array_agg(w.worker_id), '{}'::text[]),
         coalesce(pg_catalog.array_agg(w.worker_id) filter (where w.free_since <= v_clock - interval '0.5 seconds'), '{}'::text[])
  into v_free, v_dead
  from ai.queue_workers w
  where w.live
    and case when pg_catalog.pg_try_advisory_lock_shared(ai._liveness_class(), pg_catalog.hashtext(w.worker_id))
             then pg_catalog.pg_advisory_unlock_shared(ai._liveness_class(), pg_catalog.hashtext(w.worker_id))
             else false end;
  if pg_catalog.cardinality(v_free) > pg_catalog.cardinality(v_dead) then
    update ai.queue_workers w set free_since = v_clock
    where w.worker_id = any (v_free) and w.free_since is null;
  end if;
  return v_dead;
end
$$;
comment on function ai._dead_workers() is 'Internal: the workers that took a liveness hold and have not held it for half a second (their connection is gone); notes when a claim first found a hold free.';
revoke execute on function ai._dead_workers() from public;

-- ---------------------------------------------------------------------------------------------
-- Deadlines (deploy/job_deadlines.sql; docs/queue.md, "Deadlines")
--
-- A job may carry a run timeout per attempt (timeout), a total deadline (deadline) and a start
-- deadline (start_by), its own or its queue's defaults (ai.queue_deadlines, set by an operator).
-- The server holds them, whatever a worker does:
--   - The attempt's deadline is claimed_at + timeout, or the total deadline if sooner. A claim
--     leases the job at most until then, and renew_lease(s) never extend past it: once it passes,
--     the holder's calls and its fenced transactions get AS006, and the next claim takes the job
--     as any expired lease (another attempt, or FAILED after the last), its history entry saying
--     "deadline_exceeded" (ai._log_attempt), not "expired".
--   - Past the total deadline, or past start_by with no attempt counted yet, a job is not run: each
--     claim first ends such jobs of its queue FAILED ("deadline exceeded", "start deadline
--     passed"), at most 100 of each a claim, oldest deadline first, found by the partial indexes
--     agent_jobs_deadline and agent_jobs_start_by: two index probes, which find nothing in a queue
--     without overdue jobs, never a scan of the queue. A job locked by another claimer is left to it.
-- Workers cancel the handler at the attempt's deadline (python/agent_state/worker.py,
-- typescript/src/worker.ts); the fence is what makes a handler that ignores that harmless.

-- The guard of an enqueue's deadlines (called only when one is given): AS002 for a timeout that is
-- not positive, a deadline not after the job's run_at, a start_by before it.
create or replace function ai._check_deadlines(run_at timestamptz, timeout interval, deadline timestamptz,
                                               start_by timestamptz) returns void
language plpgsql immutable parallel safe
as $$
begin
  if _check_deadlines.timeout <= interval '0' then
    raise exception using errcode = 'AS002',
      message = format('timeout must be a positive interval, not %s', _check_deadlines.timeout);
  end if;
  if _check_deadlines.deadline <= _check_deadlines.run_at then
    raise exception using errcode = 'AS002',
      message = format('deadline %s is not after the job''s run_at %s', _check_deadlines.deadline, _check_deadlines.run_at);
  end if;
  if _check_deadlines.start_by < _check_deadlines.run_at then
    raise exception using errcode = 'AS002',
      message = format('start_by %s is before the job''s run_at %s', _check_deadlines.start_by, _check_deadlines.run_at);
  end if;
end
$$;
comment on function ai._check_deadlines(timestamptz, interval, timestamptz, timestamptz) is
  'Internal guard of enqueue_job and enqueue_jobs: AS002 for a timeout that is not positive, a deadline not after run_at, a start_by before run_at.';

-- What each claim ends before it picks (see above): bounded, by index, the rows it cannot lock left
-- to whoever holds them. Runs as the claim's caller (ai_service); a PENDING job's move to FAILED
-- runs the status guard, which lets ai_service through.
create or replace function ai._end_overdue(queue text, now timestamptz, started timestamptz) returns void
language plpgsql volatile
as $$
begin
  -- (PL/pgSQL, not SQL: its two statements are planned once per session, not at every claim)
  with past_deadline as (
    select j.job_id from ai.agent_jobs j
    where j.queue = _end_overdue.queue and j.status in ('PENDING', 'IN_PROGRESS') and j.deadline is not null
      and j.deadline <= _end_overdue.now
      -- a running attempt's lease ends at the deadline at the latest; the restart grace may hold it
      and (j.status = 'PENDING' or not ai._lease_held(j.lease_expires_at, j.updated_at, _end_overdue.now, _end_overdue.started))
    order by j.deadline
    limit 100
    for update skip locked
  )
  update ai.agent_jobs u
  set status = 'FAILED', last_error = 'deadline exceeded', lease_owner = null, lease_expires_at = null,
      finished_at = _end_overdue.now, updated_at = _end_overdue.now
  from past_deadline d
  where u.job_id = d.job_id;
  with past_start as (
    select j.job_id from ai.agent_jobs j
    where j.queue = _end_overdue.queue and j.status = 'PENDING' and j.start_by is not null and j.attempts = 0
      and j.start_by < _end_overdue.now
    order by j.start_by
    limit 100
    for update skip locked
  )
  update ai.agent_jobs u
  set status = 'FAILED', last_error = 'start deadline passed', finished_at = _end_overdue.now, updated_at = _end_overdue.now
  from past_start d
  where u.job_id = d.job_id;
end
$$;
comment on function ai._end_overdue(text, timestamptz, timestamptz) is
  'Internal: ends FAILED, before a claim picks, up to 100 jobs of the queue past their total deadline ("deadline exceeded") and up to 100 not started by their start_by ("start deadline passed"), by index; rows another transaction holds are skipped.';

-- An operator's default deadlines for a queue (NULL: none of that kind); all three NULL remove the
-- queue's row. Jobs enqueued later without their own get them; jobs already enqueued keep theirs.
create or replace function ai.set_queue_deadlines(queue text, timeout interval default null,
                                                  deadline_after interval default null,
                                                  start_within interval default null)
returns void
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  if not ai.sees_all_owners() then
    raise exception using errcode = 'AS007',
      message = 'set_queue_deadlines: only an operator (ai_service acting for nobody) sets a queue''s deadlines';
  end if;
  perform ai._check_text(set_queue_deadlines.queue, 'queue');
  if set_queue_deadlines.timeout <= interval '0' or set_queue_deadlines.deadline_after <= interval '0'
     or set_queue_deadlines.start_within < interval '0' then
    raise exception using errcode = 'AS002',
      message = format('set_queue_deadlines: timeout and deadline_after must be positive and start_within not negative, not %s, %s and %s',
                       coalesce(set_queue_deadlines.timeout::text, 'NULL'), coalesce(set_queue_deadlines.deadline_after::text, 'NULL'),
                       coalesce(set_queue_deadlines.start_within::text, 'NULL'));
  end if;
  if set_queue_deadlines.timeout is null and set_queue_deadlines.deadline_after is null
     and set_queue_deadlines.start_within is null then
    delete from ai.queue_deadlines d where d.queue = set_queue_deadlines.queue;
    return;
  end if;
  insert into ai.queue_deadlines as d (queue, timeout, deadline_after, start_within, updated_at)
  values (set_queue_deadlines.queue, set_queue_deadlines.timeout, set_queue_deadlines.deadline_after,
          set_queue_deadlines.start_within, ai.now())
  on conflict (queue) do update
  set timeout = excluded.timeout, deadline_after = excluded.deadline_after, start_within = excluded.start_within,
      updated_at = excluded.updated_at;
end
$$;
comment on function ai.set_queue_deadlines(text, interval, interval, interval) is
  'Sets a queue''s default deadlines, for jobs enqueued later without their own: timeout (each attempt''s run timeout), deadline_after (the total deadline, counted from the job''s run_at) and start_within (the start deadline, from run_at); NULL: none of that kind; all NULL removes the defaults. For an operator (ai_service acting for nobody): AS007 otherwise. AS002 bad argument (empty queue, a timeout or deadline_after not positive, a negative start_within).';

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
  v_start timestamptz := ai._server_start();  -- before the clock (a lease written is after it)
  v_now timestamptz := ai.now();
  v_id bigint;
  v_exp bigint;
  v_exp_priority integer;
  v_exp_at timestamptz;
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
  perform ai._end_overdue(claim_job.queue, v_now, v_start);  -- "Deadlines" above

  perform ai._activate_due(claim_job.queue, v_now);  -- the jobs that came due enter the fair order
  for attempt in 1..5 loop
    -- 1. Pick (deploy/hot_renewals.sql: no index holds the lease expiry, so a renewal is HOT).
    --    a. A lease that ran out: the queue's running jobs (agent_jobs_in_flight), the lease
    --       read from the row. Such a job is its thread's one running job: no sibling check.
    --    b. A due PENDING job in fair order (agent_jobs_claim_fair: priority desc, vtime, job_id;
    --       deploy/job_keys.sql) that comes before the expired one in the order of 0.1.0: a
    --       higher priority, or at its priority due (run_at) before the lease ended. The thread's
    --       lock keeps every other claimer off the thread until we commit; a picked expired job
    --       not taken stays locked, untouched, until then.
    --    Its key's limits must admit it (ai._admit); when they do not, claim_jobs claims (it
    --    looks past a full key's jobs).
    v_exp := null;
    select c.job_id, c.priority, c.lease_expires_at into v_exp, v_exp_priority, v_exp_at
    from ai.agent_jobs c
    where c.status = 'IN_PROGRESS' and c.queue = claim_job.queue
      and not ai._lease_held(c.lease_expires_at, c.updated_at, v_now, v_start)
      and c.job_id <> all (v_passed)
      and exists (select from ai.agent_sessions s where s.thread_id = c.thread_id
                  offset 0 for no key update skip locked)
    order by c.priority desc, c.lease_expires_at, c.job_id
    limit 1
    for update skip locked;
    select c.job_id into v_id
    from ai.agent_jobs c
    where c.status = 'PENDING' and c.queue = claim_job.queue and c.vtime is not null and c.run_at <= v_now
      and (v_exp is null or c.priority > v_exp_priority
           or (c.priority = v_exp_priority and (c.run_at, c.job_id) < (v_exp_at, v_exp)))
      and not exists (select from ai.agent_jobs b
                      where b.thread_id = c.thread_id and b.status = 'IN_PROGRESS' and b.job_id <> c.job_id
                      offset 0)  -- stays a per-row probe of the one-thread index, never a join
      and c.job_id <> all (v_passed)
      -- the claim's per-thread lock (why a row lock: the comment before ai._raise_lease_lost):
      -- the thread's session row, which no tenant can lock for another tenant's thread
      and exists (select from ai.agent_sessions s where s.thread_id = c.thread_id
                  offset 0 for no key update skip locked)
    order by c.priority desc, c.vtime, c.job_id
    limit 1
    for update skip locked;
    v_id := coalesce(v_id, v_exp);
    if v_id is null then
      return;
    end if;
    if pg_catalog.cardinality(ai._admit(claim_job.queue, array[v_id], '{}'::bigint[], v_now, v_start)) = 0 then
      -- its key is full: claim_jobs looks past that key's jobs
      return query select * from ai.claim_jobs(claim_job.worker_id, claim_job.lease, claim_job.queue, 1);
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
        lease_expires_at = least(v_now + claim_job.lease, v_now + u.timeout, u.deadline),  -- the attempt's deadline caps it
        updated_at = v_now
    where u.job_id = v_id
      and not exists (select from ai.agent_jobs b
                      where b.thread_id = u.thread_id and b.status = 'IN_PROGRESS' and b.job_id <> u.job_id
                      offset 0)
    returning u.* into j;
    if found and j.status = 'IN_PROGRESS' then
      if j.vtime is not null and j.job_id is distinct from v_exp then
        perform ai._advance_clock(claim_job.queue, j.vtime);  -- where the claims have got to
      end if;
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
  'Claims at most one job of a queue for worker_id: the highest priority first; at one priority the PENDING job due now that comes first in the fair order of the keys (docs/queue.md, "Fair shares and limits") among those due before an IN_PROGRESS job''s lease expired, else that expired job, admitted by its key''s limits, skipping rows other claimers hold and threads with another job IN_PROGRESS. The job becomes IN_PROGRESS, its attempts grow by one, its fencing_token is bumped and it is leased until ai.now() + lease. Returns 0 or 1 row. An expired job whose attempts are spent becomes FAILED instead and the claim looks again. AS002 bad argument.';

create or replace function ai.claim_jobs(worker_id text, lease interval, queue text, max_jobs integer)
returns setof ai.agent_jobs
language plpgsql volatile
set plan_cache_mode = force_generic_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_start timestamptz := ai._server_start();  -- before the clock (a lease written is after it)
  v_now timestamptz := ai.now();
  v_ids bigint[];
  v_expired boolean;
  v_dead text[];
  v_picked integer;
  v_new bigint[];
  v_kept bigint[];
  v_blocked text[] := '{}'::text[];
  v_row record;
  v_threads text[] := '{}'::text[];
  v_limited boolean;
  v_top double precision;
begin
  if claim_jobs.worker_id is null or claim_jobs.worker_id = '' or pg_catalog.char_length(claim_jobs.worker_id) > 255
     or claim_jobs.lease is null or claim_jobs.lease <= interval '0'
     or claim_jobs.queue is null or claim_jobs.queue = '' or pg_catalog.char_length(claim_jobs.queue) > 255 then
    perform ai._check_claim(claim_jobs.worker_id, claim_jobs.lease, claim_jobs.queue);
  end if;
  if claim_jobs.max_jobs is null or claim_jobs.max_jobs < 1 or claim_jobs.max_jobs > 1000 then
    perform ai._check_limit(claim_jobs.max_jobs, 'max_jobs', 1000);
  end if;
  perform ai._end_overdue(claim_jobs.queue, v_now, v_start);  -- "Deadlines" above

  -- 1. Pick, as claim_job does: the leases that ran out (agent_jobs_in_flight; one per thread,
  --    as each is its thread's running job), then due PENDING jobs (agent_jobs_claim_fair) for the
  --    rest, at most one per thread (a sibling locked here but not picked stays as it was; the row
  --    lock ends with this transaction). A batch takes the leases that ran out first (0.1.0 merged
  --    both in one order; claim_job still does).
  select pg_catalog.array_agg(e.job_id) into v_ids
  from (select c.job_id from ai.agent_jobs c
        where c.status = 'IN_PROGRESS' and c.queue = claim_jobs.queue
          and not ai._lease_held(c.lease_expires_at, c.updated_at, v_now, v_start)
          and exists (select from ai.agent_sessions s where s.thread_id = c.thread_id
                      offset 0 for no key update skip locked)
        order by c.priority desc, c.lease_expires_at, c.job_id
        limit claim_jobs.max_jobs
        for update skip locked) e;
  -- the keys' limits (ai._admit), when the queue has a limited key
  v_limited := exists (select from ai.job_keys l where l.queue = claim_jobs.queue
                       and (l.max_in_flight is not null or l.rate_per_minute is not null));
  if v_ids is not null and v_limited then
    v_ids := ai._admit(claim_jobs.queue, v_ids, '{}'::bigint[], v_now, v_start);
  end if;
  v_expired := coalesce(pg_catalog.cardinality(v_ids), 0) > 0;
  --    The due PENDING jobs in fair order (agent_jobs_claim_fair: priority desc, vtime, job_id;
  --    deploy/job_keys.sql), after giving the jobs that came due since their run_at their place in
  --    it. Their keys' limits admit them (ai._admit).
  if coalesce(pg_catalog.cardinality(v_ids), 0) < claim_jobs.max_jobs
     and exists (select from ai.agent_jobs c where c.status = 'PENDING' and c.vtime is null
                 and c.queue = claim_jobs.queue and c.run_at <= v_now) then
    perform ai._activate_due(claim_jobs.queue, v_now);
  end if;
  if coalesce(pg_catalog.cardinality(v_ids), 0) < claim_jobs.max_jobs then
    with candidates as (
      select c.job_id, c.thread_id, c.priority, c.vtime
      from ai.agent_jobs c
      where c.status = 'PENDING' and c.queue = claim_jobs.queue and c.vtime is not null and c.run_at <= v_now
        and c.job_id <> all (coalesce(v_ids, '{}'::bigint[]))
        and not exists (select from ai.agent_jobs b
                        where b.thread_id = c.thread_id and b.status = 'IN_PROGRESS' and b.job_id <> c.job_id
                        offset 0)  -- stays a per-row probe of the one-thread index, never a join
        -- the claim's per-thread lock (why a row lock: the comment before ai._raise_lease_lost):
        -- the thread's session row, which no tenant can lock for another tenant's thread
        and exists (select from ai.agent_sessions s where s.thread_id = c.thread_id
                    offset 0 for no key update skip locked)
      order by c.priority desc, c.vtime, c.job_id
      limit claim_jobs.max_jobs - coalesce(pg_catalog.cardinality(v_ids), 0)
      for update skip locked
    )
    select pg_catalog.array_agg(d.job_id order by d.priority desc, d.vtime, d.job_id), max(d.vtime) into v_new, v_top
    from (select distinct on (c.thread_id) c.job_id, c.priority, c.vtime from candidates c
          order by c.thread_id, c.priority desc, c.vtime, c.job_id) d;
    if v_new is not null and not v_limited then
      v_ids := coalesce(v_ids, '{}'::bigint[]) operator(pg_catalog.||) v_new;
    elsif v_new is not null then
      v_kept := ai._admit(claim_jobs.queue, v_new, coalesce(v_ids, '{}'::bigint[]), v_now, v_start);
      v_ids := coalesce(v_ids, '{}'::bigint[]) operator(pg_catalog.||) v_kept;
      if pg_catalog.cardinality(v_kept) < pg_catalog.cardinality(v_new) then
        v_blocked := array(select distinct j.key from ai.agent_jobs j where j.job_id = any (v_new) and j.job_id <> all (v_kept));
      end if;
    end if;
  end if;
  --    Some key was full: the room left goes to the next jobs in fair order of the other keys, one
  --    by one (the keys filtered here, not in the query: a planner that saw "key <> the one key
  --    of the backlog" would expect no row and scan the table). At most 10,000 rows are read.
  if pg_catalog.cardinality(v_blocked) > 0 and coalesce(pg_catalog.cardinality(v_ids), 0) < claim_jobs.max_jobs then
    v_threads := array(select j.thread_id from ai.agent_jobs j where j.job_id = any (v_ids));
    for v_row in
      select c.job_id, c.key, c.thread_id from ai.agent_jobs c
      where c.status = 'PENDING' and c.queue = claim_jobs.queue and c.vtime is not null and c.run_at <= v_now
        and c.job_id <> all (v_ids)
        and not exists (select from ai.agent_jobs b
                        where b.thread_id = c.thread_id and b.status = 'IN_PROGRESS' and b.job_id <> c.job_id
                        offset 0)
      order by c.priority desc, c.vtime, c.job_id
      limit 10000
    loop
      continue when v_row.key = any (v_blocked) or v_row.thread_id = any (v_threads);
      perform from ai.agent_jobs c
      where c.job_id = v_row.job_id and c.status = 'PENDING'
        and exists (select from ai.agent_sessions s where s.thread_id = c.thread_id
                    offset 0 for no key update skip locked)
      for update skip locked;
      continue when not found;
      v_threads := v_threads operator(pg_catalog.||) v_row.thread_id;
      if pg_catalog.cardinality(ai._admit(claim_jobs.queue, array[v_row.job_id], v_ids, v_now, v_start)) = 0 then
        v_blocked := v_blocked operator(pg_catalog.||) v_row.key;
        continue;
      end if;
      v_ids := v_ids operator(pg_catalog.||) v_row.job_id;
      exit when pg_catalog.cardinality(v_ids) >= claim_jobs.max_jobs;
    end loop;
  end if;
  --    Room left: the running jobs of dead workers ("Dead workers" above), taken as expired leases.
  --    Not in the first 30 seconds after the server started (the workers take their holds again).
  if coalesce(pg_catalog.cardinality(v_ids), 0) < claim_jobs.max_jobs
     and v_now >= v_start + interval '30 seconds' then
    v_dead := ai._dead_workers();
    if pg_catalog.cardinality(v_dead) > 0 then
      v_picked := coalesce(pg_catalog.cardinality(v_ids), 0);
      select coalesce(v_ids, '{}'::bigint[]) operator(pg_catalog.||) pg_catalog.array_agg(e.job_id) into v_ids
      from (select c.job_id from ai.agent_jobs c
            where c.status = 'IN_PROGRESS' and c.queue = claim_jobs.queue and c.lease_owner = any (v_dead)
              and c.lease_owner <> claim_jobs.worker_id  -- never its own: a worker that claims is alive
              and c.job_id <> all (coalesce(v_ids, '{}'::bigint[]))
              and exists (select from ai.agent_sessions s where s.thread_id = c.thread_id
                          offset 0 for no key update skip locked)
            order by c.priority desc, c.claimed_at, c.job_id
            limit claim_jobs.max_jobs - coalesce(pg_catalog.cardinality(v_ids), 0)
            for update skip locked) e;
      if coalesce(pg_catalog.cardinality(v_ids), 0) > v_picked and v_limited then
        v_ids := v_ids[1:v_picked] operator(pg_catalog.||)
                 ai._admit(claim_jobs.queue, v_ids[v_picked + 1:], v_ids[1:v_picked], v_now, v_start);
      end if;
      v_expired := v_expired or coalesce(pg_catalog.cardinality(v_ids), 0) > v_picked;
    end if;
  end if;
  if v_ids is null or pg_catalog.cardinality(v_ids) = 0 then
    return;
  end if;
  if v_top is not null then
    perform ai._advance_clock(claim_jobs.queue, v_top);  -- where the claims have got to
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
          lease_expires_at = least(v_now + claim_jobs.lease, v_now + u.timeout, u.deadline),  -- the attempt's deadline caps it
          updated_at = v_now
      -- by the primary key alone: a plain status = 'PENDING' here let the generic plan AND the ids
      -- with a scan of the whole pending index (agent_jobs_claim_fair), one that grows with the
      -- backlog; the rows are ours (locked above), the test only guards against a bug
      where u.job_id = any (v_ids) and (u.status = 'PENDING') is true
        and not exists (select from ai.agent_jobs b
                        where b.thread_id = u.thread_id and b.status = 'IN_PROGRESS' and b.job_id <> u.job_id
                        offset 0)
      returning u.*
    )
    select * from claimed c order by c.priority desc, c.vtime, c.job_id;
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
        lease_expires_at = least(v_now + claim_jobs.lease, v_now + u.timeout, u.deadline),  -- the attempt's deadline caps it
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
  order by j.priority desc, j.vtime, j.job_id;
end
$$;
comment on function ai.claim_jobs(text, interval, text, integer) is
  'Claims up to max_jobs (1 to 1000) jobs of a queue in one statement, leased as claim_job does, at most one per thread: the IN_PROGRESS jobs whose lease expired first, then the PENDING jobs due now in the fair order of their keys (docs/queue.md, "Fair shares and limits"), then the running jobs of dead workers; each key''s limits (ai.set_job_key) admit at most what they allow. AS002 bad argument.';

-- A claim that can be asked again. The connection can break after the server committed a claim
-- and before its answer arrived: the jobs are IN_PROGRESS under a worker that does not know it
-- holds them, and they would wait out the lease. With a request id (the client makes one per
-- call), the claim records it, per worker, with the jobs and tokens it took (ai.queue_workers,
-- one row per worker: its last claim that took jobs); the same call again, with the same request
-- id, answers with those jobs, under the same tokens, as long as the worker still holds them, and
-- claims nothing new. Another request id claims as claim_jobs does. Costs one HOT update per claim
-- that takes jobs; an empty claim (an idle worker's poll, its heartbeat in the registry that
-- ai.list_workers reads: deploy/queue_workers_registry.sql) writes only when the worker was last
-- heard from 5 seconds ago or more.
create or replace function ai.claim_jobs(worker_id text, lease interval, queue text, max_jobs integer, request_id text)
returns setof ai.agent_jobs
language plpgsql volatile
set plan_cache_mode = force_generic_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  r record;  -- a row of ai.queue_workers (planned after this change: a record, resolved when it runs)
  v_jobs ai.agent_jobs[];
  v_known boolean;
begin
  if claim_jobs.request_id is null or claim_jobs.request_id = '' or pg_catalog.char_length(claim_jobs.request_id) > 255 then
    perform ai._check_text(claim_jobs.request_id, 'request_id');
  end if;
  select * into r from ai.queue_workers c where c.worker_id = claim_jobs.worker_id;
  v_known := found;
  if v_known and r.request_id = claim_jobs.request_id then
    -- the same request again: its jobs that the worker still holds, under the same tokens
    return query
    select j.* from ai.agent_jobs j
    where j.job_id = any (r.job_ids) and j.status = 'IN_PROGRESS' and j.lease_owner = claim_jobs.worker_id
      and j.fencing_token = r.fencing_tokens[pg_catalog.array_position(r.job_ids, j.job_id)]
    order by j.priority desc, j.vtime, j.job_id;
    return;
  end if;
  select pg_catalog.array_agg(c) into v_jobs
  from ai.claim_jobs(claim_jobs.worker_id, claim_jobs.lease, claim_jobs.queue, claim_jobs.max_jobs) c;
  if v_jobs is null then
    -- an empty claim is an idle worker's heartbeat (ai.list_workers): written when the last one is
    -- 5 seconds old or the queue changed, so most empty polls stay read-only
    if v_known then
      v_known := r.seen_at >= ai.now() - interval '5 seconds' and r.queue is not distinct from claim_jobs.queue;
    end if;
    if not v_known then
      insert into ai.queue_workers as q (worker_id, queue, seen_at, started_at)
      values (claim_jobs.worker_id, claim_jobs.queue, ai.now(), ai.now())
      on conflict (worker_id) do update set queue = excluded.queue, seen_at = excluded.seen_at;
    end if;
    return;
  end if;
  insert into ai.queue_workers as q (worker_id, request_id, job_ids, fencing_tokens, queue, seen_at, started_at)
  select claim_jobs.worker_id, claim_jobs.request_id, pg_catalog.array_agg(x.job_id), pg_catalog.array_agg(x.fencing_token),
         claim_jobs.queue, max(x.claimed_at), max(x.claimed_at)
  from pg_catalog.unnest(v_jobs) x
  on conflict (worker_id) do update
  set request_id = excluded.request_id, job_ids = excluded.job_ids, fencing_tokens = excluded.fencing_tokens,
      queue = excluded.queue, seen_at = excluded.seen_at;
  return query select * from pg_catalog.unnest(v_jobs);
end
$$;
comment on function ai.claim_jobs(text, interval, text, integer, text) is
  'Claims as claim_jobs(worker_id, lease, queue, max_jobs) does, under a request id (1 to 255 characters, one per call: the client makes it): called again with the same worker_id and request_id (a retry after the answer was lost), it returns the jobs that claim took which worker_id still holds, under the same fencing tokens, and claims nothing new. Only a worker''s last claim that took jobs is remembered. Each call is the worker''s heartbeat in the registry ai.list_workers reads (its queue and when it was last heard from, to 5 seconds: an empty claim writes only then). AS002 bad argument.';

-- Complete and claim in one call (issue 41 item 5). A worker sends the jobs its handlers finished
-- and asks for the next ones: two round trips and two commits when made apart, one here. The
-- completions go first, so a thread whose job this call completes may have its next job claimed by
-- the same call. Both halves keep their own guarantees: each completion is fenced and idempotent
-- as complete_jobs says, the claim is remembered under its request id as claim_jobs says, so the
-- same call again (an answer lost with the connection) answers as the first did. SECURITY
-- INVOKER: it only calls the two functions, which its caller may call.
create or replace function ai.complete_and_claim(worker_id text, lease interval, queue text, max_jobs integer,
                                                 request_id text, job_ids bigint[], fencing_tokens bigint[],
                                                 results jsonb[] default null)
returns setof ai.agent_jobs
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_id bigint;
  v_done ai.agent_jobs;
begin
  if complete_and_claim.max_jobs is null or complete_and_claim.max_jobs < 0 or complete_and_claim.max_jobs > 1000 then
    raise exception using errcode = 'AS002',
      message = format('max_jobs must be between 0 and 1000, not %s', coalesce(complete_and_claim.max_jobs::text, 'NULL'));
  end if;
  -- 1. The completions (none: an empty array), answered as rows that carry job_id and status only
  if complete_and_claim.job_ids is null or pg_catalog.cardinality(complete_and_claim.job_ids) > 0 then
    v_done.status := 'COMPLETED';
    for v_id in select d from ai.complete_jobs(complete_and_claim.job_ids, complete_and_claim.fencing_tokens,
                                              complete_and_claim.results) d loop
      v_done.job_id := v_id;
      return next v_done;
    end loop;
  end if;
  -- 2. The claim (none when max_jobs is 0)
  if complete_and_claim.max_jobs > 0 then
    return query select * from ai.claim_jobs(complete_and_claim.worker_id, complete_and_claim.lease,
                                             complete_and_claim.queue, complete_and_claim.max_jobs,
                                             complete_and_claim.request_id);
  end if;
end
$$;
comment on function ai.complete_and_claim(text, interval, text, integer, text, bigint[], bigint[], jsonb[]) is
  'A worker''s completions and its next claim in one call and one transaction: completes job_ids under fencing_tokens with results as complete_jobs does, then claims up to max_jobs (0 to 1000; 0: no claim) as claim_jobs(worker_id, lease, queue, max_jobs, request_id) does. Returns the completed jobs first, as rows with only job_id and status (''COMPLETED'') set: those completed now or before under the same token (a lost lease is left out), then the claimed jobs. Called again with the same arguments (a retry after the answer was lost), it answers as the first call did. AS002 bad argument, AS003 a result over the limit.';

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
  v_start timestamptz := ai._server_start();  -- before the clock (a lease written is after it)
  v_now timestamptz := ai.now();
  v_expires timestamptz;
begin
  perform ai._check_lease(renew_lease.lease);
  update ai.agent_jobs j
  set lease_expires_at = least(v_now + renew_lease.lease, j.claimed_at + j.timeout, j.deadline), updated_at = v_now
  where j.job_id = renew_lease.job_id and j.status = 'IN_PROGRESS'
    and j.fencing_token = renew_lease.fencing_token and ai._lease_held(j.lease_expires_at, j.updated_at, v_now, v_start)
  returning j.lease_expires_at into v_expires;
  if not found then
    perform ai._raise_lease_lost(renew_lease.job_id, renew_lease.fencing_token);
  end if;
  return v_expires;
end
$$;
comment on function ai.renew_lease(bigint, bigint, interval) is
  'Extends the lease of a job held with fencing_token to ai.now() + lease, never past the attempt''s deadline (claimed_at + timeout, the job''s deadline), and returns the new expiry. AS006 lease lost (stale token, lease already expired, job no longer IN_PROGRESS), AS001 unknown job, AS002 bad lease.';

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
  v_start timestamptz := ai._server_start();  -- before the clock (a lease written is after it)
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
  -- A renewal is the worker's heartbeat too (ai.list_workers; written when 5 seconds old).
  update ai.queue_workers w set seen_at = v_now
  where w.worker_id = renew_leases.worker_id and w.seen_at < v_now - interval '5 seconds';
  -- The same conditions as renew_lease, plus the worker: the row must still be IN_PROGRESS under
  -- this token and this worker, with a lease that has not run out.
  return query
  update ai.agent_jobs j
  set lease_expires_at = least(v_now OPERATOR(pg_catalog.+) renew_leases.lease, j.claimed_at + j.timeout, j.deadline), updated_at = v_now
  from rows from (pg_catalog.unnest(renew_leases.job_ids), pg_catalog.unnest(renew_leases.fencing_tokens)) as h(job_id, fencing_token)
  where j.job_id = h.job_id and j.fencing_token = h.fencing_token and j.status = 'IN_PROGRESS'
    and j.lease_owner = renew_leases.worker_id and ai._lease_held(j.lease_expires_at, j.updated_at, v_now, v_start)
  returning j.job_id, j.lease_expires_at;
end
$$;
comment on function ai.renew_leases(text, bigint[], bigint[], interval) is
  'Extends to ai.now() + lease (never past each attempt''s deadline: claimed_at + timeout, the job''s deadline), in one statement, every lease of job_ids that worker_id holds with the matching fencing_tokens (at most 1000); returns one row per renewed job with its new expiry. A lease that is lost (stale token, another worker, expired, job no longer IN_PROGRESS, unknown job) is left out, not raised: the caller compares. Also the worker''s heartbeat in the registry ai.list_workers reads (to 5 seconds). AS002 bad argument (empty worker_id, bad lease, NULL arrays, arrays of different lengths, more than 1000 jobs).';

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

-- The fence at commit, once per transaction and job (deploy/queue.sql, "Fencing", told the first
-- version of this story; this is the current one, and docs/queue.md tells it whole).
-- ai.fenced_write checks the job at once (one probe by primary key) and, the first time a
-- transaction names that (job, token), queues one deferred check (an insert into the unlogged
-- ai.job_fences, deleted at once: its constraint trigger fires all the same) and marks the
-- transaction (the transaction-local setting ai.fenced; a savepoint rolled back drops the mark and
-- the queued check together). Later calls for the same (job, token) are the probe alone.
-- At commit, ai._check_fence_at_commit reads the job row's newest committed version without a
-- lock (no WAL, no dirtied page, nothing for a renewal to wait for) and passes only if the job is
-- still IN_PROGRESS under the token with a lease not ended, or was finished by this very
-- transaction. When a writer of that row is in flight (the version read carries the xmax of a
-- transaction in progress, ai._xmax_in_flight: a reap, cancel, release, complete or claim not yet
-- committed, or a renewal), it locks the row FOR SHARE,
-- which waits for that writer, and looks again: a taker that committed fences this transaction
-- out, one that rolled back does not. Under REPEATABLE READ or SERIALIZABLE (one snapshot for the
-- whole transaction) it always takes the FOR SHARE, as before.
-- What this gives up against a lock held from the check to the end of the commit: a taker whose
-- UPDATE starts after the check (the few microseconds between the deferred triggers and the commit
-- record) does not wait; its commit record then follows this transaction's in the WAL, so the
-- fenced commit is ordered first, as if it had committed a moment earlier.
-- Whether a row version's raw xmax may be a writer still in flight: its transaction is in
-- progress, or the value cannot be read as a transaction id of the past (a multixact: lockers
-- only, as nothing else takes key-share locks on a job row, but counted in flight to be safe).
-- A committed or aborted xmax (a lock left by a finished transaction, which a later UPDATE copies
-- to the row's new version) is not in flight.
create or replace function ai._xmax_in_flight(x xid) returns boolean
language plpgsql volatile parallel restricted
as $$
declare
  -- PL/pgSQL, bigint arithmetic: this runs in every fenced commit (a SQL function with SET is
  -- planned at each call: 300 us, measured)
  c bigint;
  d bigint;
  f bigint;
begin
  if x = '0'::xid then
    return false;
  end if;
  c := pg_catalog.pg_current_xact_id()::text::bigint;
  -- the 64-bit id nearest to the current one with these low 32 bits
  d := x::text::bigint - c % 4294967296;
  f := c + d - case when d > 2147483648 then 4294967296 when d < -2147483648 then -4294967296 else 0 end;
  if f < 0 or f > c then
    return true;
  end if;
  return coalesce(pg_catalog.pg_xact_status(f::text::pg_catalog.xid8) = 'in progress', false);
end
$$;
comment on function ai._xmax_in_flight(xid) is 'Internal: true when a row version''s xmax may be a transaction still in progress (or is not a transaction id of the past).';
revoke execute on function ai._xmax_in_flight(xid) from public;

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
  select a.status, a.fencing_token, a.lease_expires_at, a.updated_at, a.xmin, a.xmax into j
  from ai.agent_jobs a
  where a.job_id = new.job_id;
  -- (xmax 0, no writer or locker ever, tested here: a call fewer in the usual commit, issue 34 item 8)
  if not found or (j.xmax <> '0'::xid and ai._xmax_in_flight(j.xmax))
     or pg_catalog.current_setting('transaction_isolation') <> 'read committed' then
    -- a writer in flight (or one snapshot for the whole transaction): wait for it, see what it did
    select a.status, a.fencing_token, a.lease_expires_at, a.updated_at, a.xmin, a.xmax into j
    from ai.agent_jobs a
    where a.job_id = new.job_id
    for share;
  end if;
  v_now := ai.now();  -- after the read, which may have waited for a writer of the row
  if found and j.fencing_token = new.fencing_token
     and ((j.status = 'IN_PROGRESS' and (j.lease_expires_at > v_now or ai._lease_held(j.lease_expires_at, j.updated_at, v_now, ai._server_start())))
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
comment on function ai._check_fence_at_commit() is 'Internal trigger (deferred, at commit, once per fenced transaction and job): the transaction commits only if its job is still held under its token with a lease not ended, or was finished by that transaction itself; AS006 otherwise. Reads the job row without a lock unless a writer of it is in flight.';
revoke execute on function ai._check_fence_at_commit() from public;  -- a trigger needs no grant

-- Replaced only when it differs from this definition (as pg_get_triggerdef prints it): CREATE OR
-- REPLACE TRIGGER locks the table against every writer (SHARE ROW EXCLUSIVE) and queues behind any
-- open transaction that wrote to it, so a deploy over an unchanged trigger takes no table lock; a
-- changed one waits at most lock_timeout (docs/operations.md, "Upgrading under a live fleet").
do $do$
begin
  if (select pg_catalog.pg_get_triggerdef(t.oid) from pg_catalog.pg_trigger t
      where t.tgrelid = 'ai.job_fences'::pg_catalog.regclass and t.tgname = 'job_fences_checked_at_commit')
     is distinct from $t$CREATE CONSTRAINT TRIGGER job_fences_checked_at_commit AFTER INSERT ON ai.job_fences DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ai._check_fence_at_commit()$t$ then
    if pg_catalog.current_setting('lock_timeout') = '0' then
      perform pg_catalog.set_config('lock_timeout', '5s', true);
    end if;
    drop trigger if exists job_fences_checked_at_commit on ai.job_fences;
    create constraint trigger job_fences_checked_at_commit
      after insert on ai.job_fences
      deferrable initially deferred
      for each row execute function ai._check_fence_at_commit();
  end if;
end
$do$;

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
begin
  -- The check now, without a row lock: nothing waits for this transaction.
  select j.lease_expires_at into v_expires
  from ai.agent_jobs j
  where j.job_id = fenced_write.job_id and j.status = 'IN_PROGRESS'
    and j.fencing_token = fenced_write.fencing_token
    and (j.lease_expires_at > v_now or ai._lease_held(j.lease_expires_at, j.updated_at, v_now, ai._server_start()));
  if not found then
    perform ai._raise_lease_lost(fenced_write.job_id, fenced_write.fencing_token);
  end if;
  -- The check at commit, queued once per transaction and (job, token) (ai._queue_fence_check).
  perform ai._queue_fence_check(fenced_write.job_id, fenced_write.fencing_token);
  return v_expires;
end
$$;
comment on function ai.fenced_write(bigint, bigint) is
  'Asserts that the caller still holds the job (IN_PROGRESS, fencing_token current, lease not expired) and checks it again when the caller''s transaction commits: the commit fails with AS006, keeping nothing, if by then the job was taken away (reaped, cancelled, released, completed or failed by another transaction, reclaimed) or its lease has ended, unless the transaction finished the job itself. Call it first in every transaction that writes on behalf of a job; later calls in the same transaction for the same job and token only re-check (the commit check is queued once). Takes no lock and writes no WAL: nothing waits for the transaction. Returns the lease expiry. AS006 lease lost, AS001 unknown job.';

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
    and u.fencing_token = complete_job.fencing_token
    and (u.lease_expires_at > v_now or ai._lease_held(u.lease_expires_at, u.updated_at, v_now, ai._server_start()))
  returning u.* into j;
  if not found then
    -- Completed already under this token: only its holder can have done that (a claim bumps the
    -- token, a completion keeps it), so this is that holder's retry. The same answer, unchanged.
    select * into j from ai.agent_jobs x
    where x.job_id = complete_job.job_id and x.status = 'COMPLETED' and x.fencing_token = complete_job.fencing_token;
    if not found then
      perform ai._raise_lease_lost(complete_job.job_id, complete_job.fencing_token);
    end if;
  end if;
  return j;
end
$$;
comment on function ai.complete_job(bigint, bigint, jsonb) is
  'Marks a job held with fencing_token COMPLETED with its result (JSON up to 1 MiB, or NULL) and returns it. Idempotent: a job already COMPLETED under that fencing_token (a retry after the answer was lost) is returned as it is, its first result kept. AS006 lease lost, AS001 unknown job, AS003 result too large.';

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
  v_start timestamptz := ai._server_start();
  v_count integer := pg_catalog.cardinality(complete_jobs.job_ids);
  v_done bigint[];
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
  with done as (
  update ai.agent_jobs u
  set status = 'COMPLETED', result = complete_jobs.results[pg_catalog.array_position(complete_jobs.job_ids, u.job_id)],
      lease_owner = null, lease_expires_at = null, finished_at = v_now, updated_at = v_now,
      attempt_log = u.attempt_log operator(pg_catalog.||) ai._attempt_entry(
        u.attempts, u.lease_owner, u.fencing_token, u.claimed_at, u.lease_expires_at, v_now, 'completed', null)
  where u.job_id = any (complete_jobs.job_ids) and u.status = 'IN_PROGRESS'
    and u.fencing_token = complete_jobs.fencing_tokens[pg_catalog.array_position(complete_jobs.job_ids, u.job_id)]
    and ai._lease_held(u.lease_expires_at, u.updated_at, v_now, v_start)
  returning u.job_id
  )
  select pg_catalog.array_agg(d.job_id) into v_done from done d;
  if coalesce(pg_catalog.cardinality(v_done), 0) < v_count then
    -- A retry of a completion whose answer was lost: the jobs already COMPLETED under the same
    -- token (only their holder can have done that) are in the answer again (see complete_job).
    select coalesce(v_done, '{}'::bigint[]) operator(pg_catalog.||) pg_catalog.array_agg(c.job_id) into v_done
    from ai.agent_jobs c
    where c.job_id = any (complete_jobs.job_ids) and c.job_id <> all (coalesce(v_done, '{}'::bigint[]))
      and c.status = 'COMPLETED'
      and c.fencing_token = complete_jobs.fencing_tokens[pg_catalog.array_position(complete_jobs.job_ids, c.job_id)];
  end if;
  return query select pg_catalog.unnest(v_done);
end
$$;
comment on function ai.complete_jobs(bigint[], bigint[], jsonb[]) is
  'Completes up to 1000 jobs in one statement, each with its fencing token (and result, when results is given), each fenced as complete_job is; job_ids must not repeat. Returns the job_ids it completed, and those already COMPLETED under the same token (a retry after the answer was lost: idempotent); a job whose lease was lost is left out instead of raising. AS002 arrays of different lengths or more than 1000 jobs, AS003 a result over 1 MiB.';

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
      last_error = fail_job.error, lease_owner = null, lease_expires_at = null, updated_at = v_now,
      vtime = null  -- back in the fair order when due (ai._activate_due), after its key's waiting jobs
  where u.job_id = fail_job.job_id and u.status = 'IN_PROGRESS'
    and u.fencing_token = fail_job.fencing_token and (u.lease_expires_at > v_now or ai._lease_held(u.lease_expires_at, u.updated_at, v_now, ai._server_start()))
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
      lease_owner = null, lease_expires_at = null, updated_at = v_now, vtime = null  -- placed again when claimed
  where u.job_id = release_job.job_id and u.status = 'IN_PROGRESS'
    and u.fencing_token = release_job.fencing_token and (u.lease_expires_at > v_now or ai._lease_held(u.lease_expires_at, u.updated_at, v_now, ai._server_start()))
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

-- Snooze (docs/queue.md, "Snooze"): a handler that met a 429 with a retry_after gives the job back
-- until then. As release_job, but due at until: PENDING with run_at = until, the attempt given back
-- (so no attempt is spent), the history entry "snoozed". The holder's token is dead from then on
-- (the job is no longer IN_PROGRESS, and the next claim bumps it), so the fence refuses its later
-- writes; no claim takes the job before until, as for any job not yet due. The job's deadlines
-- hold across snoozes: a snooze past the total deadline ends it there.
create or replace function ai.snooze_job(job_id bigint, fencing_token bigint, until timestamptz) returns ai.agent_jobs
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
  if snooze_job.until is null or not pg_catalog.isfinite(snooze_job.until) then
    raise exception using errcode = 'AS002', message = format('until must be a finite time, not %s', coalesce(snooze_job.until::text, 'NULL'));
  end if;
  update ai.agent_jobs u
  set status = 'PENDING', attempts = u.attempts - 1, run_at = greatest(snooze_job.until, v_now),
      lease_owner = null, lease_expires_at = null, updated_at = v_now, vtime = null  -- placed again when due
  where u.job_id = snooze_job.job_id and u.status = 'IN_PROGRESS'
    and u.fencing_token = snooze_job.fencing_token and (u.lease_expires_at > v_now or ai._lease_held(u.lease_expires_at, u.updated_at, v_now, ai._server_start()))
  returning u.* into j;
  if not found then
    perform ai._raise_lease_lost(snooze_job.job_id, snooze_job.fencing_token);
  end if;
  if j.run_at <= v_now then
    perform pg_catalog.pg_notify(ai.queue_channel(j.queue), '');
  end if;
  return j;
end
$$;
comment on function ai.snooze_job(bigint, bigint, timestamptz) is
  'Gives back a job held with fencing_token until a later time (a handler that met a rate limit and its retry_after): PENDING, due at until (now if until has passed: a release), the attempt not counted, recorded in its history as snoozed; the caller''s token is refused from then on, and no claim takes the job before until. The job''s deadlines still hold. Returns the job. AS006 lease lost, AS001 unknown job, AS002 until NULL or infinite.';

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
  set status = 'PENDING', attempts = 0, run_at = v_now, finished_at = null, updated_at = v_now,
      vtime = null  -- placed again in the fair order by the next claim
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
  'The attempts of a job, oldest first: attempt number, worker, fencing token, claimed at, lease end, ended at, outcome (completed, failed, released, snoozed, cancelled, awaiting_human, expired, deadline_exceeded -- its lease ran out at the attempt''s deadline -- or in_progress for the one running) and error (a failed attempt''s). Reads archived jobs too. Each ended attempt was recorded by the transaction that ended it. AS001 unknown job, or another tenant''s.';

-- A tenant's call counts the jobs of its own sessions (agent_sessions_owner_created, then each
-- thread's jobs by agent_jobs_thread): its cost grows with its own rows, not with the other
-- tenants' jobs, which a scan of the table with the policy as a filter read one by one. A service
-- acting for nobody counts every job (archive_jobs keeps the table small). The attempt log is
-- read (one jsonpath) only for a job that has attempts ended.
create or replace function ai.queue_stats(queue text default null)
returns setof ai.queue_stats_row
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
  v_now timestamptz := ai.now();
  v_start timestamptz := ai._server_start();
  v_all boolean := ai.sees_all_owners();
  v_owner text := case when not v_all then ai.current_owner() end;
begin
  return query
  -- the tenant's sessions read first, on their own (materialized): on a Citus formation they are
  -- on the shards and the jobs on the coordinator, which Citus joins only through a result read
  -- first (docs/scaling.md)
  with mine as materialized (
    select s.thread_id from ai.agent_sessions s where not v_all and s.owner = v_owner
  ), jobs as (
    select j.queue, j.status, j.run_at, j.lease_expires_at, j.updated_at, j.attempt_log
    from ai.agent_jobs j
    where v_all and (queue_stats.queue is null or j.queue = queue_stats.queue)
    union all
    select j.queue, j.status, j.run_at, j.lease_expires_at, j.updated_at, j.attempt_log
    from mine s
    join ai.agent_jobs j on j.thread_id = s.thread_id
    where not v_all and (queue_stats.queue is null or j.queue = queue_stats.queue)
  )
  select j.queue,
         count(*) filter (where j.status = 'PENDING'),
         count(*) filter (where j.status = 'PENDING' and j.run_at <= v_now),
         count(*) filter (where j.status = 'IN_PROGRESS'),
         count(*) filter (where j.status = 'IN_PROGRESS' and not ai._lease_held(j.lease_expires_at, j.updated_at, v_now, v_start)),
         count(*) filter (where j.status = 'AWAITING_HUMAN'),
         count(*) filter (where j.status = 'COMPLETED'),
         count(*) filter (where j.status = 'FAILED'),
         count(*) filter (where j.status = 'CANCELLED'),
         v_now - min(j.run_at) filter (where j.status = 'PENDING' and j.run_at <= v_now),
         coalesce(sum(pg_catalog.jsonb_array_length(pg_catalog.jsonb_path_query_array(
           j.attempt_log, '$[*] ? (@.outcome == "failed")'))) filter (where j.attempt_log <> '[]'), 0)::bigint,
         coalesce(sum(pg_catalog.jsonb_array_length(pg_catalog.jsonb_path_query_array(
           j.attempt_log, '$[*] ? (@.outcome == "expired")'))) filter (where j.attempt_log <> '[]'), 0)::bigint
  from jobs j
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
  v_start timestamptz := ai._server_start();
  v_count integer;
begin
  -- The conditions sit in the UPDATE's own WHERE, which Postgres re-checks on the newest row
  -- version: a job completed or renewed after this statement's snapshot is left alone.
  update ai.agent_jobs j
  set status = case when j.attempts >= j.max_attempts then 'FAILED' else 'PENDING' end,
      run_at = case when j.attempts >= j.max_attempts then j.run_at else v_now end,
      vtime = null,  -- placed again in the fair order by the next claim
      finished_at = case when j.attempts >= j.max_attempts then v_now end,
      last_error = case when j.lease_expires_at >= least(j.claimed_at + j.timeout, j.deadline)
                        then format('deadline exceeded: attempt %s ran out of time', j.attempts)
                        else format('the lease of attempt %s expired', j.attempts) end,
      lease_owner = null, lease_expires_at = null, updated_at = v_now
  where j.status = 'IN_PROGRESS' and not ai._lease_held(j.lease_expires_at, j.updated_at, v_now, v_start)
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
  -- by column name: ai.agent_jobs_archive took later columns (job_deadlines, ...) after archived_at
  insert into ai.agent_jobs_archive
  select (pg_catalog.jsonb_populate_record(null::ai.agent_jobs_archive,
            pg_catalog.to_jsonb(m) operator(pg_catalog.||) pg_catalog.jsonb_build_object('archived_at', v_now))).*
  from moved m;
  get diagnostics v_count = row_count;
  -- workers not seen since (ai.queue_workers: no claim, no liveness hold taken), as old as the jobs
  delete from ai.queue_workers w where w.seen_at <= v_now - archive_jobs.older_than;
  return v_count;
end
$$;
comment on function ai.archive_jobs(interval, integer) is
  'Moves up to max_rows (1 to 100000) finished jobs (COMPLETED, FAILED, CANCELLED) finished more than older_than ago from ai.agent_jobs to ai.agent_jobs_archive and returns how many. Call it until it returns 0; each call is one short transaction. For ai_service. AS002 bad argument.';

-- ---------------------------------------------------------------------------------------------
-- Privileges: tenants enqueue, read and cancel; workers (ai_service) do everything.

revoke execute on function
  ai._check_lease(interval), ai._check_claim(text, interval, text), ai._raise_lease_lost(bigint, bigint),
  ai._raise_not_allowed(bigint, text),
  ai._backoff(integer), ai._finish_spent(bigint, timestamptz),
  ai._check_enqueue(text, jsonb, text, integer, integer, text), ai._enqueue_owner(text), ai._check_headers(jsonb),
  ai._check_deadlines(timestamptz, interval, timestamptz, timestamptz), ai._end_overdue(text, timestamptz, timestamptz),
  ai.set_queue_deadlines(text, interval, interval, interval),
  ai.snooze_job(bigint, bigint, timestamptz),
  ai._job_key(text, text), ai._fair_base(text, text, integer, timestamptz), ai._key_step(text, text),
  ai._advance_clock(text, double precision),
  ai._activate_due(text, timestamptz), ai._admit(text, bigint[], bigint[], timestamptz, timestamptz),
  ai.enqueue_job(text, jsonb, text, timestamptz, integer, integer, text, interval, timestamptz, timestamptz, text, jsonb),
  ai.claim_job(text, interval, text), ai.claim_jobs(text, interval, text, integer),
  ai.claim_jobs(text, interval, text, integer, text),
  ai.complete_and_claim(text, interval, text, integer, text, bigint[], bigint[], jsonb[]),
  ai.hold_worker_liveness(text), ai.release_worker_liveness(text), ai._dead_workers(),
  ai.renew_lease(bigint, bigint, interval), ai.fenced_write(bigint, bigint),
  ai.complete_job(bigint, bigint, jsonb), ai.complete_jobs(bigint[], bigint[], jsonb[]),
  ai.fail_job(bigint, bigint, text, interval), ai.release_job(bigint, bigint), ai.cancel_job(bigint), ai.retry_dead_job(bigint), ai.get_job(bigint), ai.job_attempts(bigint),
  ai.queue_stats(text), ai.reap_expired(text), ai.archive_jobs(interval, integer), ai.queue_channel(text),
  ai._written_here(xid)
from public;
grant execute on function ai.enqueue_job(text, jsonb, text, timestamptz, integer, integer, text, interval, timestamptz, timestamptz, text, jsonb),
  ai.cancel_job(bigint), ai.get_job(bigint), ai.job_attempts(bigint), ai.queue_stats(text)
to ai_user, ai_service;
grant execute on function ai.claim_job(text, interval, text), ai.claim_jobs(text, interval, text, integer),
  ai.claim_jobs(text, interval, text, integer, text), ai.hold_worker_liveness(text), ai.release_worker_liveness(text),
  ai.renew_lease(bigint, bigint, interval), ai.fenced_write(bigint, bigint),
  ai.complete_job(bigint, bigint, jsonb), ai.complete_jobs(bigint[], bigint[], jsonb[]),
  ai.complete_and_claim(text, interval, text, integer, text, bigint[], bigint[], jsonb[]),
  ai.fail_job(bigint, bigint, text, interval), ai.release_job(bigint, bigint), ai.retry_dead_job(bigint),
  ai.snooze_job(bigint, bigint, timestamptz), ai.set_queue_deadlines(text, interval, interval, interval),
  ai.reap_expired(text), ai.archive_jobs(interval, integer), ai.queue_channel(text)
to ai_service;

-- 0.1.0's ai._lock_thread(text): claim_job and claim_jobs write the thread lock in their query,
-- nothing called it (issue 22); the revert brings it back with the 0.1.0 bodies.
drop function if exists ai._lock_thread(text);

commit;
