-- Deploy agent-state:job_row_check_fast_path to pg
-- requires: queue_lean_writes
--
-- The row CHECK of ai.agent_jobs called ai._check_job_row for every row a statement writes: a
-- PL/pgSQL call per row, whose expression PL/pgSQL prepares anew in every transaction, and a
-- queue's transactions are one claim or one finish each. It now states the same rules as a plain
-- expression and calls the function only when that expression is false, so that the error still
-- names the rule a row breaks. A valid row (every row a worker writes) costs a few comparisons.
-- Same rules, same SQLSTATE (23514), same constraint name. (The columns it reads are NOT NULL or
-- tested with IS NULL, so the expression is true or false, never NULL: a false one always reaches
-- the function, which raises.)
--
-- Replacing the constraint reads ai.agent_jobs once under a lock that holds writers off: archive
-- finished jobs first to keep it short.
begin;

alter table ai.agent_jobs
  drop constraint agent_jobs_row_check,
  add constraint agent_jobs_row_check check (
    (status in ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED', 'AWAITING_HUMAN')
     and pg_catalog.char_length(queue) between 1 and 255 and attempts >= 0 and max_attempts >= 1
     and (idempotency_key is null or pg_catalog.char_length(idempotency_key) between 1 and 255)
     and (status <> 'IN_PROGRESS' or (lease_owner is not null and lease_expires_at is not null)))
    or ai._check_job_row(status, queue, attempts, max_attempts, idempotency_key, lease_owner, lease_expires_at));

-- The function now runs only for a row that breaks a rule, so it no longer repeats the rules as one
-- expression: it tests them one at a time, raises for the first broken, and returns true when none
-- is (a direct call on a valid row). A NULL breaks a rule here as it makes the expression NULL (the
-- columns are NOT NULL, so no row gets this far with one; tests/python/test_row_rules_agree.py
-- holds the two halves to the same answer on every edge value).
create or replace function ai._check_job_row(status text, queue text, attempts integer, max_attempts integer,
                                             idempotency_key text, lease_owner text, lease_expires_at timestamptz)
returns boolean
language plpgsql immutable parallel safe
set search_path = pg_catalog, pg_temp
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

commit;
