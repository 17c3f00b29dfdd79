-- Revert agent-state:job_row_check_fast_path from pg
-- Back to the CHECK that calls ai._check_job_row for every row, and that function's one-expression
-- fast path.
begin;

create or replace function ai._check_job_row(status text, queue text, attempts integer, max_attempts integer,
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

alter table ai.agent_jobs
  drop constraint agent_jobs_row_check,
  add constraint agent_jobs_row_check
    check (ai._check_job_row(status, queue, attempts, max_attempts, idempotency_key, lease_owner, lease_expires_at));

comment on function ai._check_job_row(text, text, integer, integer, text, text, timestamptz) is
  'Internal: the CHECK of ai.agent_jobs rows (status, queue name, attempts, idempotency key, a running job''s lease); raises 23514 naming the rule a row breaks.';

commit;
