-- Revert agent-state:queue_lean_writes from pg
-- Back to the six CHECK constraints, the BEFORE trigger, and the claim functions that call the
-- shared guards.
begin;

alter table ai.agent_jobs
  drop constraint agent_jobs_row_check,
  add constraint agent_jobs_queue_check check (pg_catalog.char_length(queue) between 1 and 255),
  add constraint agent_jobs_status_check
    check (status in ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED', 'AWAITING_HUMAN')),
  add constraint agent_jobs_attempts_check check (attempts >= 0),
  add constraint agent_jobs_max_attempts_check check (max_attempts >= 1),
  add constraint agent_jobs_idempotency_key_check check (pg_catalog.char_length(idempotency_key) between 1 and 255),
  add constraint agent_jobs_lease
    check (status <> 'IN_PROGRESS' or (lease_owner is not null and lease_expires_at is not null));
drop function ai._check_job_row(text, text, integer, integer, text, text, timestamptz);

drop trigger agent_jobs_status_moved on ai.agent_jobs;
drop function ai._job_status_moved();
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

create function ai._close_approval_of_cancelled_job() returns trigger
language plpgsql
as $$
begin
  perform ai._close_approval_of_job(new.job_id, new.thread_id);
  return null;
end
$$;
comment on function ai._close_approval_of_cancelled_job() is
  'Internal trigger (after a job goes from AWAITING_HUMAN to CANCELLED, however written): ai._close_approval_of_job.';
revoke execute on function ai._close_approval_of_cancelled_job() from public;  -- a trigger needs no grant

create trigger agent_jobs_close_approval_on_cancel
  after update of status on ai.agent_jobs
  for each row
  when (old.status = 'AWAITING_HUMAN' and new.status = 'CANCELLED')
  execute function ai._close_approval_of_cancelled_job();
create trigger agent_jobs_tenant_status
  before update of status on ai.agent_jobs
  for each row
  when (old.status is distinct from new.status
        and not pg_catalog.pg_has_role(ai.calling_role(), 'ai_service', 'MEMBER'))
  execute function ai._guard_tenant_job_status();

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
  perform ai._check_claim(claim_job.worker_id, claim_job.lease, claim_job.queue);

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

  -- expired jobs whose attempts were spent are finished as FAILED; the others are handed out
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
  perform ai._check_limit(greatest(v_count, 1), 'the number of jobs', 1000);
  if exists (select from pg_catalog.unnest(complete_jobs.results) r where pg_catalog.pg_column_size(r) > ai._max_document_bytes()) then
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
