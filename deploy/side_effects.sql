-- Deploy agent-state:side_effects to pg
-- requires: queue
-- requires: retention
--
-- The tool-call ledger: exactly-once external side effects
-- =========================================================
-- A retried step must not fire the same external action twice (charge a card, send a mail). The
-- caller names each logical action with an idempotency key (ai.idempotency_key over the fields
-- that identify it: step, user, amount, ...) and brackets the call:
--
--   ai.begin_side_effect(thread, key, request, job_id, fencing_token)
--     outcome 'execute'  the key is now reserved for this caller: do it, then finish
--             'done'     it was done before: here is the stored result, do not do it again
--             'busy'     another live claim holds the key: do not do it, try later
--   ai.finish_side_effect(thread, key, result, job_id, fencing_token)   stores the result (fenced)
--   ai.abandon_side_effect(thread, key, job_id, fencing_token, error)   gives the key back after a clean failure
--
-- Who holds a reservation
--   With a job: the (job_id, fencing_token) of the claim that reserved it. The reservation lives
--   exactly as long as that claim: while the job is IN_PROGRESS under that token with its lease
--   running. Without a job: the reservation's own attempt number stands for the token and it
--   lives until reserved_until (begin's `reservation`, 5 minutes by default).
--
-- Takeover
--   A reservation whose holder is dead (its worker crashed, the job was reclaimed, the lease ran
--   out) is taken over by the next begin: outcome 'execute' with taken_over = true. The dead
--   holder may or may not have reached the outside world before it died, and no database can
--   know; taken_over tells the tool to check (or to pass the same key downstream, e.g. to a
--   payment API that deduplicates on it) before executing again. A dead holder's finish is
--   refused (AS006 with a job, AS031 without), so the ledger never holds two results for one key.
--
-- Calls that time out
--   Every call can be repeated: begin by the same holder returns 'execute' again, finish of an
--   already finished key with the same holder and result returns the row, so a caller that did
--   not hear the answer (did it land?) simply retries the same call.
--
-- Locks: begin and finish check the job (ai.fenced_write, checked again at commit, which then
-- locks the job row FOR SHARE) when given a job, then lock one ledger row FOR UPDATE.
begin;

insert into ai.error_codes (sqlstate, name, description) values
  ('AS030', 'key_reused', 'A side-effect idempotency key was reused for a different request in the same thread.'),
  ('AS031', 'not_reserved', 'finish_side_effect or abandon_side_effect by a caller that does not hold the reservation (another holder took it over, it was finished or abandoned, or never begun).');

-- The rules of a row, one at a time (the CHECK of ai.side_effects is one call of this function): raises
-- 23514 naming the first rule broken, a NULL breaking a rule as well; true when none is.
create function ai._check_side_effect_row(idempotency_key text, status text, attempt integer, takeovers integer,
                                          finished_at timestamptz)
returns boolean
language plpgsql immutable parallel safe
as $$
begin
  if (pg_catalog.char_length(idempotency_key) between 1 and 255) is not true then
    raise exception using errcode = '23514', constraint = 'side_effects_row_check',
      message = 'an idempotency key has 1 to 255 characters';
  end if;
  if status is null or status not in ('reserved', 'done', 'abandoned') then
    raise exception using errcode = '23514', constraint = 'side_effects_row_check',
      message = format('side effect status %s is not reserved, done or abandoned',
                       coalesce(pg_catalog.quote_literal(status), 'NULL'));
  end if;
  if (attempt >= 1 and takeovers >= 0) is not true then
    raise exception using errcode = '23514', constraint = 'side_effects_row_check',
      message = format('attempt must be 1 or more and takeovers 0 or more, not %s and %s',
                       coalesce(attempt::text, 'NULL'), coalesce(takeovers::text, 'NULL'));
  end if;
  if status = 'done' and finished_at is null then
    raise exception using errcode = '23514', constraint = 'side_effects_row_check',
      message = 'a done side effect has finished_at';
  end if;
  return true;
end
$$;
-- 0.1.0's comment, not true: the CHECK calls the function for every row. The change
-- comments_0_2 sets the current one (a released table change is not edited).
comment on function ai._check_side_effect_row(text, text, integer, integer, timestamptz) is
  'Internal: called by the CHECK of ai.side_effects rows only for a row that breaks a rule (idempotency key length, status, attempt, takeovers, a done one''s finished_at); raises 23514 naming the rule, true when none is broken.';
revoke execute on function ai._check_side_effect_row(text, text, integer, integer, timestamptz) from public;
-- internal helpers (ai._*): no EXECUTE grant; only the schema owner's functions call them

create table ai.side_effects (
  thread_id text not null,
  idempotency_key text not null,
  owner text not null,
  request jsonb not null default '{}',
  status text not null,
  result jsonb,
  attempt integer not null default 1,
  takeovers integer not null default 0,
  job_id bigint,
  fencing_token bigint,
  reserved_until timestamptz,
  last_error text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  finished_at timestamptz,
  primary key (thread_id, idempotency_key),
  foreign key (thread_id, owner) references ai.agent_sessions (thread_id, owner) on delete cascade,
  -- The rules of a row (deploy/schema.sql, "Row rules"): never NULL, as every column it reads is
  -- NOT NULL but finished_at, which it tests with IS NULL.
  constraint side_effects_row_check check (ai._check_side_effect_row(idempotency_key, status, attempt, takeovers, finished_at))
);
comment on table ai.side_effects is 'The tool-call ledger: one row per logical external action of a thread (its idempotency key), reserved, done with its result, or abandoned. See docs/human-in-the-loop.md.';
comment on column ai.side_effects.attempt is 'Reservations taken so far; without a job it is the token finish and abandon name.';
comment on column ai.side_effects.takeovers is 'How many times a dead holder''s reservation was taken over.';
comment on column ai.side_effects.reserved_until is 'Without a job: when the reservation dies. With a job the job''s lease decides.';

alter table ai.side_effects enable row level security;
alter table ai.side_effects force row level security;
create policy side_effects_by_owner on ai.side_effects
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));
-- No table privilege for ai_user or ai_service: they reach this table only through the functions,
-- which run as the schema owner (SECURITY DEFINER; docs/security.md).

-- Retention: the ledger moves with its session.
create table ai_archive.side_effects (like ai.side_effects including defaults including constraints including indexes,
  foreign key (thread_id, owner) references ai_archive.agent_sessions (thread_id, owner) on delete cascade);
alter table ai_archive.side_effects enable row level security;
alter table ai_archive.side_effects force row level security;
create policy side_effects_by_owner on ai_archive.side_effects
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));
insert into ai._archived_tables (table_name, copy_order, order_by) values ('side_effects', 90, 'created_at');

commit;
