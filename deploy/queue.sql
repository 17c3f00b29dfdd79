-- Deploy agent-state:queue to pg
-- requires: sessions
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
--   IN_PROGRESS --request_human--> AWAITING_HUMAN --resolve_human--> PENDING (human_in_the_loop)
-- A job whose worker died stays IN_PROGRESS until its lease expires. From then on the next claim
-- takes it again and counts an attempt, or, when its attempts are spent, finishes it as FAILED.
-- No cron is needed: ai.reap_expired() only makes dashboards honest sooner.
-- A database outage does not count against a lease: a lease renewed before the server started
-- that had not ended five minutes before the start holds for the first 30 seconds after it, so
-- its holder reconnects and finishes the job with its token (deploy/queue_functions.sql, "Leases
-- and database outages"; ai._lease_held is the one test of a lease). An answer lost with the
-- connection is safe to ask for again: a claim under a request id answers with the same jobs
-- (ai.queue_workers, deploy/queue_workers.sql), a completion under the same token with the
-- job it completed, and the client gives an enqueue without a key one of its own (docs/queue.md,
-- "Lost answers"). (Comment lines of a released script: issue 41.)
--
-- Fencing
--   Every claim bumps fencing_token. Every write on behalf of a job names (job_id, fencing_token)
--   and re-checks status, token and lease in the WHERE of the very UPDATE that writes, so a
--   caller acting on a stale view (a zombie worker, a sweep) changes nothing and gets AS006.
--   Maintenance too: reap_expired and cancel_job state the status they act on in their UPDATE,
--   which Postgres re-checks on the newest row version (the race of River #1302 cannot happen).
--   ai.fenced_write() is that check for a caller's own transaction, made twice: when called, and
--   again when the transaction commits (a deferred constraint trigger). The commit goes through
--   only if the job is still IN_PROGRESS under the caller's token with a lease that has not ended,
--   or was finished by that very transaction; else it fails with AS006 and nothing it wrote stays.
--   fenced_write holds no lock, so the fence makes nothing wait for an open fenced transaction: a
--   reap, a cancel, a release or complete by another transaction, a reclaim go ahead and fence it
--   out. What the transaction wrote stays locked as any write until it ends (its session row, a
--   message's seq: docs/queue.md, "Fencing"). (Comment lines of a released script: issue 22.)
--
-- One thread at a time
--   Two jobs of one thread are never IN_PROGRESS together. A claim picks only jobs whose thread has
--   no other job IN_PROGRESS and whose thread lock (a row lock on the thread's ai.agent_sessions
--   row, which no tenant can take for another's thread; tried, never waited for) it gets, then
--   takes them in a second statement that checks the thread again with a snapshot younger than
--   that lock, so it sees a sibling's claim that committed meanwhile. The partial unique index
--   agent_jobs_one_running_per_thread backs the rule, even for raw UPDATEs.
--
-- Lock order
--   A claim tries thread locks (session rows, FOR NO KEY UPDATE SKIP LOCKED) and locks job rows
--   with FOR UPDATE SKIP LOCKED: it waits on nothing.
--   Every other function locks exactly one job row, by primary key, with an UPDATE. A fenced
--   transaction locks its job row FOR SHARE only at commit (a writer of that row in flight makes it
--   wait; renew_lease waits for it that long). enqueue_job reads the session and inserts; its FK
--   check takes KEY SHARE on the session row. No function holds one job row while waiting for
--   another.
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
--
-- What a write pays before it touches a row
--   The queue is nothing but short statements, so the fixed cost of each one decides its speed.
--   Postgres rebuilds every CHECK expression of a table from its stored text once per statement
--   that writes it (stringToNode), so the row rules sit in one constraint, agent_jobs_row_check.
--   It states them as a plain expression and calls ai._check_job_row only for a row that breaks
--   one, so the error names the rule (SQLSTATE 23514); a valid row (every row a worker writes)
--   costs a few comparisons, no PL/pgSQL call. (Domains would test the same rules, but a domain
--   column no longer compares equal to text in a row comparison and RETURN QUERY refuses it where
--   text is declared: callers' SQL would break.)
--   A BEFORE ROW trigger makes every UPDATE lock the row before its WHEN clause is even looked
--   at (one more WAL record per finish), and each WHEN clause is rebuilt per statement too. So
--   the status guard of ai.agent_jobs (agent_jobs_status_moved, deploy/queue_functions.sql) is an
--   AFTER trigger whose WHEN clause is false for a claim and a finish: it refuses a write after
--   the row is written, which rolls the statement back all the same. (The attempt-log trigger is
--   BEFORE, as it writes the row, and its WHEN clause keeps it off claims of PENDING jobs,
--   renewals and completions.) The claim and finish
--   functions test their arguments as plain expressions and call the shared guards (one query
--   each) only for an argument that fails.

-- The rules of a row, one at a time, for a row that breaks one (the CHECK of ai.agent_jobs states
-- them as a plain expression and calls this only when that expression is false): raises 23514
-- (check_violation) naming the first rule broken, with the constraint's name; true when none is
-- (a direct call on a valid row).
create function ai._check_job_row(status text, queue text, attempts integer, max_attempts integer,
                                  idempotency_key text, lease_owner text, lease_expires_at timestamptz)
returns boolean
language plpgsql immutable parallel safe
as $$
begin
  if status is null or status not in ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED', 'AWAITING_HUMAN') then
    raise exception using errcode = '23514', constraint = 'agent_jobs_row_check',
      message = format('job status %s is not PENDING, IN_PROGRESS, COMPLETED, FAILED, CANCELLED or AWAITING_HUMAN',
                       coalesce(pg_catalog.quote_literal(status), 'NULL'));
  end if;
  if queue is null or pg_catalog.char_length(queue) not between 1 and 255 then
    raise exception using errcode = '23514', constraint = 'agent_jobs_row_check',
      message = 'a queue name has 1 to 255 characters';
  end if;
  if attempts is null or max_attempts is null or attempts < 0 or max_attempts < 1 then
    raise exception using errcode = '23514', constraint = 'agent_jobs_row_check',
      message = format('attempts must be 0 or more and max_attempts 1 or more, not %s and %s',
                       coalesce(attempts::text, 'NULL'), coalesce(max_attempts::text, 'NULL'));
  end if;
  if pg_catalog.char_length(idempotency_key) not between 1 and 255 then
    raise exception using errcode = '23514', constraint = 'agent_jobs_row_check',
      message = 'an idempotency key has 1 to 255 characters';
  end if;
  if status = 'IN_PROGRESS' and (lease_owner is null or lease_expires_at is null) then
    raise exception using errcode = '23514', constraint = 'agent_jobs_row_check',
      message = 'an IN_PROGRESS job has a lease owner and a lease expiry';
  end if;
  return true;
end
$$;
comment on function ai._check_job_row(text, text, integer, integer, text, text, timestamptz) is
  'Internal: called by the CHECK of ai.agent_jobs rows only for a row that breaks a rule (status, queue name, attempts, idempotency key, a running job''s lease); raises 23514 naming the rule, true when none is broken.';
revoke execute on function ai._check_job_row(text, text, integer, integer, text, text, timestamptz) from public;
-- internal helpers (ai._*): no EXECUTE grant; only the schema owner's functions call them

create table ai.agent_jobs (
  job_id bigint generated always as identity primary key,
  thread_id text not null,
  owner text not null,
  queue text not null default 'default',
  status text not null default 'PENDING',
  payload jsonb not null default '{}',
  priority integer not null default 0,
  run_at timestamptz not null,
  attempts integer not null default 0,
  max_attempts integer not null default 5,
  lease_owner text,
  lease_expires_at timestamptz,
  fencing_token bigint not null default 0,
  last_error text,
  result jsonb,
  idempotency_key text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  finished_at timestamptz,
  claimed_at timestamptz,
  attempt_log jsonb not null default '[]',
  -- When a claim may take the job: run_at while PENDING, the end of the lease while IN_PROGRESS.
  available_at timestamptz generated always as
    (case when status = 'IN_PROGRESS' then lease_expires_at else run_at end) stored,
  foreign key (thread_id, owner) references ai.agent_sessions (thread_id, owner) on delete cascade,
  -- The rules of a row as a plain expression; ai._check_job_row runs only for a row that breaks
  -- one, to name it. The columns read are NOT NULL or tested with IS NULL, so the expression is
  -- true or false, never NULL: a false one always reaches the function, which raises.
  constraint agent_jobs_row_check check (
    (status in ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED', 'AWAITING_HUMAN')
     and pg_catalog.char_length(queue) between 1 and 255 and attempts >= 0 and max_attempts >= 1
     and (idempotency_key is null or pg_catalog.char_length(idempotency_key) between 1 and 255)
     and (status <> 'IN_PROGRESS' or (lease_owner is not null and lease_expires_at is not null)))
    or ai._check_job_row(status, queue, attempts, max_attempts, idempotency_key, lease_owner, lease_expires_at))
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
comment on column ai.agent_jobs.claimed_at is 'When the current (or last) attempt was claimed.';
comment on column ai.agent_jobs.attempt_log is 'The attempts that ended, oldest first: a JSON array of {attempt, worker, fencing_token, claimed_at, lease_expires_at, ended_at, outcome, error}, appended by the transaction that ended each one (ai.job_attempts reads it).';
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

-- The fence at commit. fenced_write queues a check that runs when the caller's transaction
-- commits (a deferred constraint trigger on ai.job_fences): the job must still be IN_PROGRESS under
-- the caller's token with a lease that has not ended at that moment (ai.now()), or have been moved
-- by that very transaction (its own complete_job, fail_job, release_job or request_human, which
-- hold the row from then on). Otherwise the commit fails with AS006 and nothing the transaction
-- wrote is kept. The check locks the job row FOR SHARE: a reap, cancel, release, complete or claim
-- in flight makes it wait and then look at what that one did; once it holds the lock, they wait
-- for its commit. So nothing waits for an open fenced transaction, and whoever takes a job from its
-- holder fences out the holder's open transaction, whichever of the two commits first.
-- The table never holds a committed row: fenced_write deletes its row at once (the queued trigger
-- fires all the same). Unlogged: nothing in it is worth a WAL record.
create unlogged table ai.job_fences (
  job_id bigint not null,
  fencing_token bigint not null
) with (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
        autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 1000);
comment on table ai.job_fences is 'Internal: one row per ai.fenced_write call, deleted at once; its deferred trigger checks the fence again at commit.';
alter table ai.job_fences enable row level security;
alter table ai.job_fences force row level security;
-- A row is only ever seen by the transaction that wrote it (it is gone before that one commits).
-- No grant: only ai.fenced_write (SECURITY DEFINER, the schema owner) writes it.
create policy job_fences_own_transaction on ai.job_fences using (true) with check (true);

-- A row of ai.queue_stats names its queue `queue`, as a job does; a type rather than RETURNS TABLE,
-- whose columns could not share the function's argument name.
create type ai.queue_stats_row as (
  queue text, pending bigint, due bigint, in_progress bigint, expired_leases bigint, awaiting_human bigint,
  completed bigint, failed bigint, cancelled bigint, oldest_due_age interval, failed_attempts bigint,
  expired_attempts bigint
);
comment on type ai.queue_stats_row is 'One row of ai.queue_stats: the jobs of one queue by status, and its attempt figures.';

commit;
