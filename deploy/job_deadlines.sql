-- Deploy agent-state:job_deadlines to pg
-- requires: queue
-- requires: retention
--
-- Deadlines (issue 38 item 1; docs/queue.md, "Deadlines"). Each job may carry three, all NULL by
-- default (no deadline):
--   timeout   each attempt's run timeout: a claim leases the job at most until claimed_at + timeout
--             (capped by the total deadline), and no renewal reaches past that; the attempt's
--             holder is then fenced out (AS006) and the next claim retries the job, or dead-letters
--             it after its last attempt, with "deadline exceeded" in its history;
--   deadline  the total deadline across attempts: past it the job is not run again; a claim that
--             meets it ends it FAILED ("deadline exceeded");
--   start_by  the start deadline: a job still PENDING then is ended FAILED ("start deadline passed")
--             by a claim that meets it, instead of running late.
-- ai.queue_deadlines holds an operator's defaults per queue (ai.set_queue_deadlines), read by
-- enqueue_job and enqueue_jobs for a job enqueued without its own: timeout as is, deadline_after
-- and start_within counted from the job's run_at.
-- Two partial indexes let a claim find the jobs that a deadline ends, oldest deadline first, without
-- a scan of the queue; a job without deadlines is in neither (an enqueue, claim or finish of such a
-- job writes no entry there). Neither column changes on a renewal, which stays a HOT update.
-- Every copy of the job rows (ai.agent_jobs_archive, ai_archive.agent_jobs and its archive twin)
-- gets the columns too.
begin;

select pg_catalog.set_config('lock_timeout', '5s', true) where pg_catalog.current_setting('lock_timeout') = '0';

-- if not exists: an operator may have added them first, to build the indexes below concurrently
-- (docs/operations.md, "Indexes")
alter table ai.agent_jobs add column if not exists timeout interval, add column if not exists deadline timestamptz,
  add column if not exists start_by timestamptz;
comment on column ai.agent_jobs.timeout is 'Each attempt''s run timeout (NULL: none): the lease never reaches past claimed_at + timeout (nor past deadline).';
comment on column ai.agent_jobs.deadline is 'The total deadline across attempts (NULL: none): a claim that meets a job past it ends it FAILED, "deadline exceeded".';
comment on column ai.agent_jobs.start_by is 'The start deadline (NULL: none): a job still PENDING then is ended FAILED, "start deadline passed", by a claim that meets it.';
alter table ai.agent_jobs_archive add column timeout interval, add column deadline timestamptz,
  add column start_by timestamptz;
alter table ai_archive.agent_jobs add column timeout interval, add column deadline timestamptz,
  add column start_by timestamptz;
alter table ai_archive.agent_jobs_archive add column timeout interval, add column deadline timestamptz,
  add column start_by timestamptz;

-- What a claim ends: PENDING jobs past their start deadline, and PENDING or IN_PROGRESS jobs past
-- their total deadline, per queue, oldest first (a job counts as started once an attempt of it is
-- counted: a retried job is past its start deadline's reach).
create index if not exists agent_jobs_start_by on ai.agent_jobs (queue, start_by)
  where status = 'PENDING' and start_by is not null and attempts = 0;
create index if not exists agent_jobs_deadline on ai.agent_jobs (queue, deadline)
  where status in ('PENDING', 'IN_PROGRESS') and deadline is not null;

-- An operator's default deadlines per queue. Read and written only through the functions
-- (ai.set_queue_deadlines: ai_service acting for nobody); a tenant can neither read nor change it.
create table ai.queue_deadlines (
  queue text primary key check (pg_catalog.char_length(queue) between 1 and 255),
  timeout interval check (timeout > interval '0'),
  deadline_after interval check (deadline_after > interval '0'),
  start_within interval check (start_within >= interval '0'),
  updated_at timestamptz not null
);
comment on table ai.queue_deadlines is
  'An operator''s default deadlines per queue (ai.set_queue_deadlines), for jobs enqueued without their own: timeout per attempt, deadline_after and start_within counted from the job''s run_at.';
alter table ai.queue_deadlines enable row level security;
alter table ai.queue_deadlines force row level security;
-- No grant: only the queue's SECURITY DEFINER functions (the schema owner) reach it.
create policy queue_deadlines_schema_owner on ai.queue_deadlines using (true) with check (true);

commit;
