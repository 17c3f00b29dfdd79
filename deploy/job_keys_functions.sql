-- Deploy agent-state:job_keys_functions to pg
-- requires: job_keys
-- requires: queue_functions
--
-- The operator's hand on fair shares and limits (issue 38 item 5; docs/queue.md, "Fair shares and
-- limits"): ai.set_job_key sets a key's weight, concurrency limit and rate (operators only: a
-- tenant cannot raise its own), ai.job_key_status reads each key's figures (a tenant, only the
-- keys of its own jobs, counted over its own jobs).
begin;

create or replace function ai.set_job_key(queue text, key text, weight double precision default 1,
                                          max_in_flight integer default null, rate_per_minute double precision default null,
                                          burst integer default null)
returns ai.job_keys
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_queue alias for $1;
  a_key alias for $2;
  v_now timestamptz := ai.now();
  k ai.job_keys;
begin
  if not ai.sees_all_owners() then
    raise exception using errcode = 'AS007',
      message = 'set_job_key is for operators (ai_service acting for no owner): a service acting for a tenant cannot set its limits';
  end if;
  perform ai._check_text(a_queue, 'queue');
  perform ai._check_text(a_key, 'key');
  if set_job_key.weight is null or set_job_key.weight = 'NaN'::double precision
     or set_job_key.weight <= 0 or set_job_key.weight > 1000000 then
    raise exception using errcode = 'AS002',
      message = format('weight must be above 0 and at most 1000000, not %s', coalesce(set_job_key.weight::text, 'NULL'));
  end if;
  if set_job_key.max_in_flight < 0 then
    raise exception using errcode = 'AS002',
      message = format('max_in_flight must be 0 or more (or NULL: no limit), not %s', set_job_key.max_in_flight);
  end if;
  if set_job_key.rate_per_minute = 'NaN'::double precision or set_job_key.rate_per_minute <= 0
     or set_job_key.rate_per_minute > 1000000 then
    raise exception using errcode = 'AS002',
      message = format('rate_per_minute must be above 0 and at most 1000000 (or NULL: no limit), not %s', set_job_key.rate_per_minute);
  end if;
  if set_job_key.burst is not null and (set_job_key.burst < 1 or set_job_key.rate_per_minute is null) then
    raise exception using errcode = 'AS002',
      message = format('burst must be 1 or more, with a rate_per_minute, not %s', set_job_key.burst);
  end if;

  if set_job_key.weight = 1 and set_job_key.max_in_flight is null and set_job_key.rate_per_minute is null then
    -- the defaults: no row
    delete from ai.job_keys j where j.queue = a_queue and j.key = a_key;
    return null;
  end if;
  insert into ai.job_keys as j (queue, key, weight, max_in_flight, rate_per_minute, burst, updated_at)
  values (a_queue, a_key, set_job_key.weight, set_job_key.max_in_flight, set_job_key.rate_per_minute,
          set_job_key.burst, v_now)
  on conflict (queue, key) do update
  set weight = excluded.weight, max_in_flight = excluded.max_in_flight, rate_per_minute = excluded.rate_per_minute,
      burst = excluded.burst, updated_at = excluded.updated_at,
      -- a bucket kept (never fuller than the new burst), a new one full
      tokens = case when excluded.rate_per_minute is null or j.rate_per_minute is null then null
                    else least(j.tokens, coalesce(excluded.burst, greatest(1, pg_catalog.ceil(excluded.rate_per_minute / 60)))) end,
      refilled_at = case when excluded.rate_per_minute is null or j.rate_per_minute is null then null else j.refilled_at end
  returning j.* into k;
  return k;
end
$$;
comment on function ai.set_job_key(text, text, double precision, integer, double precision, integer) is
  'Sets what claims hold a key of a queue to, replacing what was set: weight (its share against the other keys with due jobs, above 0, at most 1000000; 1 by default), max_in_flight (at most that many of its jobs running under a lease that holds; 0 pauses the key; NULL no limit), rate_per_minute (a token bucket: at most burst claims at once and rate_per_minute a minute on average; NULL no limit) and burst (1 or more; NULL: a second''s worth, at least 1). A key is a job''s key (enqueue_job(key => ...)) or ''@'' and a tenant''s name for the jobs that name none. The defaults (weight 1, no limits) remove the key''s row and return NULL; otherwise returns the row. For operators: a tenant holds no EXECUTE (42501), a service acting for an owner gets AS007. AS002 bad argument.';

-- A key's figures. A tenant sees the keys its own jobs carry (PENDING or running), counted over
-- its own jobs (row level security), and neither the names nor the backlogs of other tenants'
-- keys; operators see every key with jobs and every key with a row in ai.job_keys. Keys come in
-- (queue, key) order from after_queue/after_key on, found by stepping through the key indexes
-- (agent_jobs_key_pending, agent_jobs_in_flight: a loose index scan, never a scan of the jobs);
-- the counts stop at 10000.
create or replace function ai.job_key_status(queue text default null, max_rows integer default 100,
                                             after_queue text default null, after_key text default null)
returns setof ai.job_key_status_row
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_queue alias for $1;
  v_now timestamptz := ai.now();
  v_start timestamptz := ai._server_start();
  v_all boolean := ai.sees_all_owners();
  v_aq text := coalesce(after_queue, '');
  v_ak text := coalesce(after_key, '');
begin
  perform ai._check_limit(job_key_status.max_rows, 'max_rows', 1000);
  if a_queue is not null then
    perform ai._check_text(a_queue, 'queue');
    v_aq := greatest(v_aq, a_queue);
  end if;
  return query
  with recursive pending_keys (queue, key) as (
    (select j.queue, j.key from ai.agent_jobs j
     where j.status = 'PENDING' and j.key is not null and (j.queue, j.key) > (v_aq, v_ak)
       and (a_queue is null or j.queue = a_queue)
     order by j.queue, j.key limit 1)
    union all
    select n.queue, n.key from pending_keys p
    cross join lateral (select j.queue, j.key from ai.agent_jobs j
                        where j.status = 'PENDING' and j.key is not null and (j.queue, j.key) > (p.queue, p.key)
                          and (a_queue is null or j.queue = a_queue)
                        order by j.queue, j.key limit 1) n
  ), running_keys (queue, key) as (
    (select j.queue, j.key from ai.agent_jobs j
     where j.status = 'IN_PROGRESS' and j.key is not null and (j.queue, j.key) > (v_aq, v_ak)
       and (a_queue is null or j.queue = a_queue)
     order by j.queue, j.key limit 1)
    union all
    select n.queue, n.key from running_keys p
    cross join lateral (select j.queue, j.key from ai.agent_jobs j
                        where j.status = 'IN_PROGRESS' and j.key is not null and (j.queue, j.key) > (p.queue, p.key)
                          and (a_queue is null or j.queue = a_queue)
                        order by j.queue, j.key limit 1) n
  ), keys as (
    select u.queue, u.key from (
      (select p.queue, p.key from pending_keys p limit job_key_status.max_rows)
      union
      (select r.queue, r.key from running_keys r limit job_key_status.max_rows)
      union
      (select k.queue, k.key from ai.job_keys k
       where v_all and (k.queue, k.key) > (v_aq, v_ak) and (a_queue is null or k.queue = a_queue)
       order by k.queue, k.key limit job_key_status.max_rows)) u
    order by u.queue, u.key
    limit job_key_status.max_rows
  )
  select s.queue, s.key, coalesce(k.weight, 1::double precision), k.max_in_flight,
         (select pg_catalog.count(*) from (select from ai.agent_jobs c
           where c.queue = s.queue and c.key = s.key and c.status = 'IN_PROGRESS'
             and ai._lease_held(c.lease_expires_at, c.updated_at, v_now, v_start) limit 10000) x),
         k.rate_per_minute,
         case when k.rate_per_minute is not null
              then coalesce(k.burst, greatest(1, pg_catalog.ceil(k.rate_per_minute / 60)))::integer end,
         case when v_all and k.rate_per_minute is not null
              then least(coalesce(k.burst, greatest(1, pg_catalog.ceil(k.rate_per_minute / 60))),
                         coalesce(k.tokens, k.burst, greatest(1, pg_catalog.ceil(k.rate_per_minute / 60)))
                         + k.rate_per_minute / 60 * greatest(0, extract(epoch from v_now - coalesce(k.refilled_at, v_now)))) end,
         (select pg_catalog.count(*) from (select from ai.agent_jobs c
           where c.queue = s.queue and c.key = s.key and c.status = 'PENDING' limit 10000) x),
         (select pg_catalog.count(*) from (select from ai.agent_jobs c
           where c.queue = s.queue and c.key = s.key and c.status = 'PENDING' and c.run_at <= v_now limit 10000) x)
  from keys s
  left join ai.job_keys k on k.queue = s.queue and k.key = s.key
  order by s.queue, s.key;
end
$$;
comment on function ai.job_key_status(text, integer, text, text) is
  'Each key''s figures, of one queue or all, in (queue, key) order after (after_queue, after_key), at most max_rows (1 to 1000; 100 by default): weight, max_in_flight, in_flight (running jobs whose lease holds), rate_per_minute, burst, tokens (the bucket now; operators only), backlog (PENDING jobs) and due (PENDING and due now), the counts stopping at 10000. A tenant sees only the keys its own jobs carry, counted over its own jobs; operators (ai_service acting for no owner) every key with jobs or with limits set. AS002 bad argument.';

revoke execute on function ai.set_job_key(text, text, double precision, integer, double precision, integer),
  ai.job_key_status(text, integer, text, text) from public;
grant execute on function ai.set_job_key(text, text, double precision, integer, double precision, integer) to ai_service;
grant execute on function ai.job_key_status(text, integer, text, text) to ai_user, ai_service;

commit;
