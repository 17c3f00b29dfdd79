-- Deploy agent-state:enqueue_jobs to pg
-- requires: queue_functions
--
-- Batch enqueue (issue 41 item 4): one call for up to 5,000 jobs of one queue, each with its own
-- thread, payload, run_at, priority and idempotency key, as parallel arrays (as put_writes takes
-- its writes). Each job passes the guards ai.enqueue_job runs (ai._check_enqueue for the
-- arguments, ai._enqueue_owner for the session: AS001, AS002, AS003, AS004; one bad job fails the
-- whole call, nothing is written) and is answered as ai.enqueue_job answers it: a key used before
-- in the queue returns the first job unchanged, and a key repeated within the call returns the
-- job of its first occurrence, as the same calls one after the other would. The jobs are one
-- INSERT ... SELECT: job ids are drawn first, in the input's order, so each input row finds its
-- answer by id (a new job) or by its key (a job that was there). One pg_notify per call when any
-- new job is due now. Over 5,000 jobs: AS003 (too large), so a producer splits its batch; a
-- call's jobs are inserted in one statement and one transaction, and its size bounds both.
-- headers (change job_headers): one object for every job of the call, since it is the enqueuing
-- call's context (its trace) that it carries.
begin;

create function ai.enqueue_jobs(
  thread_ids text[], payloads jsonb[], queue text default 'default', run_ats timestamptz[] default null,
  priorities integer[] default null, idempotency_keys text[] default null, max_attempts integer default 5,
  timeouts interval[] default null, deadlines timestamptz[] default null, start_bys timestamptz[] default null,
  keys text[] default null, headers jsonb default null)
returns setof ai.agent_jobs
language plpgsql volatile
set plan_cache_mode = force_generic_plan
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_queue alias for $3;
  v_n integer := pg_catalog.cardinality(thread_ids);
  v_now timestamptz := ai.now();
  v_job record;
  v_timeout interval;
  v_after interval;
  v_within interval;
begin
  if thread_ids is null or payloads is null then
    raise exception using errcode = 'AS002', message = 'thread_ids and payloads must not be NULL';
  end if;
  if v_n > 5000 then
    raise exception using errcode = 'AS003', message = format('%s jobs in one call: at most 5000', v_n);
  end if;
  if pg_catalog.cardinality(payloads) <> v_n
     or pg_catalog.cardinality(coalesce(run_ats, pg_catalog.array_fill(null::timestamptz, array[v_n]))) <> v_n
     or pg_catalog.cardinality(coalesce(priorities, pg_catalog.array_fill(0, array[v_n]))) <> v_n
     or pg_catalog.cardinality(coalesce(idempotency_keys, pg_catalog.array_fill(null::text, array[v_n]))) <> v_n
     or pg_catalog.cardinality(coalesce(timeouts, pg_catalog.array_fill(null::interval, array[v_n]))) <> v_n
     or pg_catalog.cardinality(coalesce(deadlines, pg_catalog.array_fill(null::timestamptz, array[v_n]))) <> v_n
     or pg_catalog.cardinality(coalesce(start_bys, pg_catalog.array_fill(null::timestamptz, array[v_n]))) <> v_n
     or pg_catalog.cardinality(coalesce(keys, pg_catalog.array_fill(null::text, array[v_n]))) <> v_n
     or pg_catalog.array_ndims(thread_ids) > 1 then
    raise exception using errcode = 'AS002',
      message = 'thread_ids, payloads, run_ats, priorities, idempotency_keys, timeouts, deadlines, start_bys and keys must be one-dimensional arrays of one length';
  end if;
  if v_n = 0 then
    return;
  end if;

  -- the guards of one enqueue_job, job by job in the input's order, before anything is written
  for v_job in
    select i.thread_id, i.payload, i.priority, i.key, coalesce(i.run_at, v_now) as run_at, i.timeout, i.deadline, i.start_by
    from rows from (pg_catalog.unnest(thread_ids), pg_catalog.unnest(payloads), pg_catalog.unnest(priorities),
                    pg_catalog.unnest(idempotency_keys), pg_catalog.unnest(run_ats), pg_catalog.unnest(timeouts),
                    pg_catalog.unnest(deadlines), pg_catalog.unnest(start_bys))
         with ordinality as i (thread_id, payload, priority, key, run_at, timeout, deadline, start_by, ord)
    order by i.ord
  loop
    perform ai._check_enqueue(v_job.thread_id, v_job.payload, a_queue, coalesce(v_job.priority, 0),
                              enqueue_jobs.max_attempts, v_job.key);
    if v_job.timeout is not null or v_job.deadline is not null or v_job.start_by is not null then
      perform ai._check_deadlines(v_job.run_at, v_job.timeout, v_job.deadline, v_job.start_by);
    end if;
  end loop;
  -- the queue's defaults for the deadlines not given (ai.set_queue_deadlines), as enqueue_job
  select d.timeout, d.deadline_after, d.start_within into v_timeout, v_after, v_within
  from ai.queue_deadlines d where d.queue = a_queue;
  perform ai._check_headers(enqueue_jobs.headers);

  return query
  with input as materialized (
    -- an omitted (NULL) array reads as NULLs: run_at now, priority 0, no key
    select i.ord, i.thread_id, i.payload, coalesce(i.run_at, v_now) as run_at, coalesce(i.priority, 0) as priority,
           i.key, coalesce(i.timeout, v_timeout) as timeout,
           coalesce(i.deadline, coalesce(i.run_at, v_now) + v_after) as deadline,
           coalesce(i.start_by, coalesce(i.run_at, v_now) + v_within) as start_by,
           i.job_key, i.run_at is null as due_now
    from rows from (pg_catalog.unnest(thread_ids), pg_catalog.unnest(payloads), pg_catalog.unnest(run_ats),
                    pg_catalog.unnest(priorities), pg_catalog.unnest(idempotency_keys), pg_catalog.unnest(timeouts),
                    pg_catalog.unnest(deadlines), pg_catalog.unnest(start_bys), pg_catalog.unnest(keys))
         with ordinality as i (thread_id, payload, run_at, priority, key, timeout, deadline, start_by, job_key, ord)
  ), owners as materialized (
    -- one session lookup per thread (AS001 unknown or another tenant's, AS004 finished)
    select t.thread_id, ai._enqueue_owner(t.thread_id) as owner
    from (select distinct x.thread_id from input x) t
  ), numbered as materialized (
    select x.*, o.owner, ai._job_key(x.job_key, o.owner) as fair_key,
           pg_catalog.nextval(pg_catalog.pg_get_serial_sequence('ai.agent_jobs', 'job_id')) as job_id
    from input x join owners o using (thread_id)
    order by x.ord
  ), placed as materialized (
    -- the fair order (deploy/job_keys.sql): the jobs due now of a key and priority follow its
    -- last one, 1/weight apart, in the input's order; a job given a run_at is placed when due
    select n.job_id, f.base + f.step * pg_catalog.row_number() over (partition by n.fair_key, n.priority order by n.ord) as vtime
    from numbered n
    join (select g.fair_key, g.priority, ai._fair_base(a_queue, g.fair_key, g.priority, v_now) as base,
                 ai._key_step(a_queue, g.fair_key) as step
          from (select distinct m.fair_key, m.priority from numbered m where m.due_now) g) f
      on f.fair_key = n.fair_key and f.priority = n.priority
    where n.due_now
  ), inserted as (
    insert into ai.agent_jobs as t (job_id, thread_id, owner, queue, payload, priority, run_at, max_attempts,
                                    idempotency_key, created_at, updated_at, timeout, deadline, start_by, headers,
                                    key, vtime)
    overriding system value
    select n.job_id, n.thread_id, n.owner, a_queue, n.payload, n.priority, n.run_at, enqueue_jobs.max_attempts,
           n.key, v_now, v_now, n.timeout, n.deadline, n.start_by, enqueue_jobs.headers, n.fair_key, p.vtime
    from numbered n left join placed p using (job_id)
    order by n.ord
    on conflict (owner, queue, idempotency_key) where idempotency_key is not null do nothing
    returning t as job
  )
  -- each input row's answer: its new job; or the job an earlier row of this call made with its
  -- key (rows are inserted in the input's order); or the job that held its key before the call
  select (coalesce(i.job, d.job, e)).*
  from numbered n
  left join inserted i on (i.job).job_id = n.job_id
  left join inserted d on n.key is not null and (d.job).owner = n.owner and (d.job).idempotency_key = n.key
  left join ai.agent_jobs e
    on n.key is not null and e.owner = n.owner and e.queue = a_queue and e.idempotency_key = n.key
  order by n.ord;

  -- wake the queue's workers once when a job is due now (a repeated key's wake-up is harmless)
  if run_ats is null or exists (select from pg_catalog.unnest(run_ats) r (at) where r.at is null or r.at <= v_now) then
    perform pg_catalog.pg_notify(ai.queue_channel(a_queue), '');
  end if;
end
$$;
comment on function ai.enqueue_jobs(text[], jsonb[], text, timestamptz[], integer[], text[], integer, interval[], timestamptz[], timestamptz[], text[], jsonb) is
  'Enqueues up to 5000 jobs of one queue in one call and returns one job per input row, in the input''s order: thread_ids[i] with payloads[i], run_ats[i] (NULL or omitted: now), priorities[i] (omitted: 0) and idempotency_keys[i] (NULL or omitted: none), max_attempts for all, timeouts[i], deadlines[i] and start_bys[i] (NULL or omitted: the queue''s default, else none; as ai.enqueue_job''s timeout, deadline and start_by), keys[i] (the fairness and limit key; NULL or omitted: the owner''s own), and headers for all (as ai.enqueue_job takes them: the enqueuing call''s trace context). Each job is checked and answered as ai.enqueue_job does: a key used before in the queue by the owner returns the first job unchanged, and a key repeated within the call returns the job of its first occurrence. One bad job fails the call and writes nothing. Sends pg_notify(ai.queue_channel(queue), '''') once when a new job is due now. AS001 unknown thread, AS002 bad argument (arrays of different lengths too), AS003 a payload over 1 MiB or more than 5000 jobs, AS004 session finished.';
revoke execute on function ai.enqueue_jobs(text[], jsonb[], text, timestamptz[], integer[], text[], integer, interval[], timestamptz[], timestamptz[], text[], jsonb) from public;
grant execute on function ai.enqueue_jobs(text[], jsonb[], text, timestamptz[], integer[], text[], integer, interval[], timestamptz[], timestamptz[], text[], jsonb)
  to ai_user, ai_service;

commit;
