-- Deploy agent-state:renew_leases to pg
-- requires: queue_lean_writes
--
-- A worker holding many long runs renewed their leases one call each: at 200 runs renewing every
-- few seconds that is a statement, a transaction and a commit per lease. ai.renew_leases renews
-- every lease one worker holds in one statement (one transaction, one commit, one plan), with the
-- same checks per job as ai.renew_lease. A lease that is lost is left out of the result instead of
-- raising, so one lost job does not stop the renewal of the others; the caller compares.
-- (docs/queue.md; the capacity bench, bench/capacity.sh, measures it against one call per lease.)
begin;

create function ai.renew_leases(worker_id text, job_ids bigint[], fencing_tokens bigint[],
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

commit;
