-- Deploy agent-state:queue_lean_writes to pg
-- requires: queue
-- requires: cancel_awaiting_human
--
-- The queue is nothing but short statements, so what a statement pays before it touches a row
-- decides its speed. A profile of claim_job + complete_job (perf on the serving backend,
-- docs/benchmarks.md) found two such costs on every UPDATE of ai.agent_jobs:
--
-- * CHECK constraints. Postgres rebuilds each CHECK expression from its stored text
--   (stringToNode) once per statement that writes the table; with six of them that was a fifth
--   of the backend's CPU per job. The same rules now sit in one CHECK that calls one function:
--   a one-call expression to rebuild, and a function compiled once per backend.
-- * Triggers. A BEFORE ROW trigger makes every UPDATE lock the row before its WHEN clause is even
--   looked at (one more WAL record per complete), and each trigger's WHEN clause is rebuilt per
--   statement too; with the tenant guard (BEFORE, WHEN calling pg_has_role) and the approval
--   closer of cancel_awaiting_human, a worker paid more for the two triggers than for its claim.
--   Both are now one AFTER trigger whose cheap WHEN clause is false for a claim and a finish; it
--   refuses the same writes (an error after the row is written rolls the statement back).
--
-- And fewer statements per call: claim_job / claim_jobs test their arguments as plain expressions
-- (the shared guards, one query each, run only for an argument that fails); claim_jobs hands out
-- what its UPDATE returns when it picked only PENDING jobs (before, two more statements read the
-- claimed rows back by id); complete_jobs checks the sizes of results only when there are some.
--
-- Adding the CHECK reads ai.agent_jobs once under a lock that holds writers off: archive finished
-- jobs first to keep it short. (Domains would have done it too, but a domain column no longer
-- compares equal to text in a row comparison and RETURN QUERY refuses it where text is declared:
-- callers' SQL would break.)
begin;

-- One CHECK for the row, through a function: its expression is a single call, so rebuilding it
-- per statement costs little, and the function (compiled once per backend, about a microsecond
-- a row) says which rule a row breaks. SQLSTATE 23514 (check_violation), as before.
create function ai._check_job_row(status text, queue text, attempts integer, max_attempts integer,
                                  idempotency_key text, lease_owner text, lease_expires_at timestamptz)
returns boolean
language plpgsql immutable parallel safe
as $$
begin
  -- One expression for the common case (plpgsql prepares each expression once per transaction,
  -- and a queue's transactions are short); the rules one at a time only to name the one broken.
  if status in ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED', 'AWAITING_HUMAN')
     and pg_catalog.char_length(queue) between 1 and 255 and attempts >= 0 and max_attempts >= 1
     and (idempotency_key is null or pg_catalog.char_length(idempotency_key) between 1 and 255)
     and (status <> 'IN_PROGRESS' or (lease_owner is not null and lease_expires_at is not null)) then
    return true;
  end if;
  if status is null or status not in ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED', 'AWAITING_HUMAN') then
    raise exception using errcode = '23514', constraint = 'agent_jobs_row_check',
      message = format('job status %s is not PENDING, IN_PROGRESS, COMPLETED, FAILED, CANCELLED or AWAITING_HUMAN',
                       coalesce(pg_catalog.quote_literal(status), 'NULL'));
  end if;
  if pg_catalog.char_length(queue) not between 1 and 255 then
    raise exception using errcode = '23514', constraint = 'agent_jobs_row_check',
      message = 'a queue name has 1 to 255 characters';
  end if;
  if attempts < 0 or max_attempts < 1 then
    raise exception using errcode = '23514', constraint = 'agent_jobs_row_check',
      message = format('attempts must be 0 or more and max_attempts 1 or more, not %s and %s', attempts, max_attempts);
  end if;
  if pg_catalog.char_length(idempotency_key) not between 1 and 255 then
    raise exception using errcode = '23514', constraint = 'agent_jobs_row_check',
      message = 'an idempotency key has 1 to 255 characters';
  end if;
  raise exception using errcode = '23514', constraint = 'agent_jobs_row_check',
    message = 'an IN_PROGRESS job has a lease owner and a lease expiry';
end
$$;
comment on function ai._check_job_row(text, text, integer, integer, text, text, timestamptz) is
  'Internal: the CHECK of ai.agent_jobs rows (status, queue name, attempts, idempotency key, a running job''s lease); raises 23514 naming the rule a row breaks.';
revoke execute on function ai._check_job_row(text, text, integer, integer, text, text, timestamptz) from public;
-- internal helpers (ai._*): no EXECUTE grant; only the schema owner's functions call them

alter table ai.agent_jobs
  drop constraint agent_jobs_status_check,
  drop constraint agent_jobs_queue_check,
  drop constraint agent_jobs_attempts_check,
  drop constraint agent_jobs_max_attempts_check,
  drop constraint agent_jobs_idempotency_key_check,
  drop constraint agent_jobs_lease,
  add constraint agent_jobs_row_check
    check (ai._check_job_row(status, queue, attempts, max_attempts, idempotency_key, lease_owner, lease_expires_at));

-- The tenant guard, after the row is written: an error rolls the statement back all the same.
-- One trigger for status moves, with the smallest WHEN clause that is false for a worker's claim
-- and finish (the two UPDATEs a queue is made of), so they never run it: a claim sets lease_owner,
-- a complete, fail, release, reap or request_human clears it. A tenant holds no privilege on
-- lease_owner, so each of a tenant's raw UPDATEs runs it; so does every cancel (cancel_job leaves
-- lease_owner as it was; a job that waits for a person has none) and an answer to a job that waits
-- (none before, none after). It applies the tenant rule (only cancel a job, or answer one that
-- waits for a person) and, when a job that waited for a person is cancelled, closes its approval
-- (the change cancel_awaiting_human). A service that cancels a waiting job by hand must leave
-- lease_owner alone for that to happen, as cancel_job does.
create function ai._job_status_moved() returns trigger
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

drop trigger agent_jobs_tenant_status on ai.agent_jobs;
drop trigger agent_jobs_close_approval_on_cancel on ai.agent_jobs;
drop function ai._guard_tenant_job_status();
drop function ai._close_approval_of_cancelled_job();
create trigger agent_jobs_status_moved
  after update of status on ai.agent_jobs
  for each row
  when (new.lease_owner is not distinct from old.lease_owner)
  execute function ai._job_status_moved();

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

commit;
