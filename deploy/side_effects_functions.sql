-- Deploy agent-state:side_effects_functions to pg
-- Reworked after v0.1.0; the tagged script is deploy/side_effects_functions@v0.1.0.sql.
-- requires: side_effects
-- requires: queue_functions
--
-- The functions and triggers of side effects (its tables, indexes and row rules:
-- deploy/side_effects.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework side_effects_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

-- ---------------------------------------------------------------------------------------------

create or replace function ai.idempotency_key(variadic parts text[]) returns text
language plpgsql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
declare
  v_buf text := '';
  v_part text;
begin
  if parts is null or pg_catalog.cardinality(parts) = 0 then
    raise exception using errcode = 'AS002', message = 'idempotency_key needs at least one part';
  end if;
  -- Each part length-prefixed (NULL as its own marker), so ('ab','c') and ('a','bc') differ.
  foreach v_part in array parts loop
    if v_part is null then
      v_buf := v_buf || 'N;';
    else
      v_buf := v_buf || pg_catalog.char_length(v_part)::text || ':' || v_part || ';';
    end if;
  end loop;
  return pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(v_buf, 'UTF8')), 'hex');
end
$$;
comment on function ai.idempotency_key(text[]) is
  'A deterministic key (64 hex characters, sha256) over the identifying fields of an operation, e.g. ai.idempotency_key(''charge'', user_id, amount::text). Each part is length-prefixed and NULL is distinct from ''''; the Python client computes the same key. AS002 no parts.';

-- Guards shared by the three calls: the thread, the key, and a token (the job's, or without a
-- job the attempt's) where the call needs one. The job and its token: ai._fence.
create or replace function ai._check_side_effect_args(thread_id text, idempotency_key text, job_id bigint, fencing_token bigint,
                                           need_token boolean)
returns void
language plpgsql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
begin
  perform ai._check_thread_id(thread_id);
  perform ai._check_text(idempotency_key, 'idempotency_key');
  if need_token and job_id is null and fencing_token is null then
    raise exception using errcode = 'AS002',
      message = 'fencing_token must not be NULL (without a job: the attempt begin_side_effect returned)';
  end if;
end
$$;
comment on function ai._check_side_effect_args(text, text, bigint, bigint, boolean) is 'Internal guard of the side-effect calls: thread id, key, and (need_token) the attempt''s token when no job is given.';

-- Whether the holder of a reservation can still finish it.
create or replace function ai._side_effect_holder_alive(e ai.side_effects, now timestamptz) returns boolean
language sql stable
as $$
  select case
    when e.status <> 'reserved' then false
    when e.job_id is null then e.reserved_until > now
    else exists (select from ai.agent_jobs j
                 where j.job_id = e.job_id and j.status = 'IN_PROGRESS'
                   and j.fencing_token = e.fencing_token and j.lease_expires_at > now)
  end
$$;
comment on function ai._side_effect_holder_alive(ai.side_effects, timestamptz) is 'Internal: whether a reservation''s holder (its claim, or its reserved_until) is still alive.';

-- begin_side_effect's answer: one row, a composite rather than a table so that the function is
-- not set-returning. Citus may delegate a call of it to the worker that holds the thread only then
-- (ai.distribute(): a set-returning function cannot refuse a NULL thread_id before Citus hashes it).
do $$
begin
  if not exists (select from pg_catalog.pg_type t where t.typname = 'side_effect_begin'
                    and t.typnamespace = 'ai'::pg_catalog.regnamespace) then
    create type ai.side_effect_begin as (outcome text, attempt integer, taken_over boolean, result jsonb,
                                         holder_job_id bigint, reserved_until timestamptz);
  end if;
end
$$;
comment on type ai.side_effect_begin is
  'ai.begin_side_effect''s answer: outcome (''execute'', ''done'' or ''busy''), the attempt, whether a dead holder''s reservation was taken over, the stored result when done, the holder''s job and its reservation''s end.';
-- v0.1.0's begin_side_effect returned a table: a return type CREATE OR REPLACE cannot change
do $$
begin
  if exists (select from pg_catalog.pg_proc p
              where p.oid = pg_catalog.to_regprocedure('ai.begin_side_effect(text,text,jsonb,bigint,bigint,interval)')
                and p.proretset) then
    drop function ai.begin_side_effect(text, text, jsonb, bigint, bigint, interval);
  end if;
end
$$;

create or replace function ai.begin_side_effect(
  thread_id text, idempotency_key text, request jsonb default '{}', job_id bigint default null,
  fencing_token bigint default null, reservation interval default '5 minutes')
returns ai.side_effect_begin
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_key alias for $2;
  a_request alias for $3;
  a_job_id alias for $4;
  a_token alias for $5;
  v_now timestamptz := ai.now();
  v_owner text;
  v_until timestamptz;
  v_taken_over boolean;
  e ai.side_effects;
begin
  perform ai._check_side_effect_args(a_thread_id, a_key, a_job_id, a_token, false);
  perform ai._check_document(a_request, 'request');
  if begin_side_effect.reservation is null or begin_side_effect.reservation <= interval '0' then
    raise exception using errcode = 'AS002', message = 'reservation must be a positive interval';
  end if;
  -- With a job, the guard of every write made for a job (deploy/sessions_functions.sql); without
  -- one, a token is the attempt begin_side_effect returned, checked against the reservation.
  if a_job_id is not null then
    perform ai._fence(a_thread_id, a_job_id, a_token);
  end if;
  select s.owner into v_owner from ai.agent_sessions s where s.thread_id = a_thread_id;
  if not found then
    raise exception using errcode = 'AS001', message = format('thread %s not found', a_thread_id);
  end if;
  v_until := case when a_job_id is null then v_now + begin_side_effect.reservation end;

  -- A new key: reserved for the caller. A racing begin waits here for this insert to commit.
  insert into ai.side_effects (thread_id, idempotency_key, owner, request, status, job_id, fencing_token,
                               reserved_until, created_at, updated_at)
  values (a_thread_id, a_key, v_owner, a_request, 'reserved', a_job_id, a_token, v_until, v_now, v_now)
  on conflict on constraint side_effects_pkey do nothing
  returning * into e;
  if found then
    return ('execute', e.attempt, false, null, e.job_id, e.reserved_until)::ai.side_effect_begin;
  end if;

  select * into e from ai.side_effects s
  where s.thread_id = a_thread_id and s.idempotency_key = a_key
  for update;
  if not found then
    -- the conflicting row went away meanwhile: its session was deleted (or archived)
    raise exception using errcode = 'AS001', message = format('thread %s not found', a_thread_id);
  end if;
  if e.request <> a_request then
    raise exception using errcode = 'AS030',
      message = format('side-effect key %s of thread %s was used for a different request', a_key, a_thread_id);
  end if;
  if e.status = 'done' then
    return ('done', e.attempt, false, e.result, e.job_id, e.reserved_until)::ai.side_effect_begin;
  end if;
  if e.status = 'reserved' and a_job_id is not null and e.job_id = a_job_id and e.fencing_token = a_token then
    -- The holder asking again (it did not hear the first answer): the same reservation.
    return ('execute', e.attempt, e.takeovers > 0, null, e.job_id, e.reserved_until)::ai.side_effect_begin;
  end if;
  if ai._side_effect_holder_alive(e, v_now) then
    return ('busy', e.attempt, false, null, e.job_id, e.reserved_until)::ai.side_effect_begin;
  end if;

  -- Abandoned (a clean failure: nothing happened outside) or held by a dead holder (anything may
  -- have happened): reserved again for the caller; a takeover says so.
  v_taken_over := e.status = 'reserved';
  update ai.side_effects s
  set status = 'reserved', attempt = s.attempt + 1, takeovers = s.takeovers + v_taken_over::integer,
      job_id = a_job_id, fencing_token = a_token, reserved_until = v_until, updated_at = v_now
  where s.thread_id = a_thread_id and s.idempotency_key = a_key
  returning * into e;
  if v_taken_over then
    insert into ai.session_events (thread_id, owner, kind, payload, created_at)
    values (e.thread_id, e.owner, 'side_effect_takeover',
            pg_catalog.jsonb_build_object('idempotency_key', e.idempotency_key, 'attempt', e.attempt, 'job_id', e.job_id),
            v_now);
  end if;
  return ('execute', e.attempt, v_taken_over, null, e.job_id, e.reserved_until)::ai.side_effect_begin;
end
$$;
comment on function ai.begin_side_effect(text, text, jsonb, bigint, bigint, interval) is
  'Asks to perform the external action named by idempotency_key (thread-scoped) for request. outcome ''execute'': the key is reserved for the caller (for the claim job_id/fencing_token, fenced; without a job for `reservation`, and attempt is then the token to finish with); taken_over true means a dead holder''s reservation was taken over (it may have acted: check the outside world, pass the same key downstream) and a side_effect_takeover event is written. ''done'': result is the stored result; do not act again. ''busy'': a live holder has it. The holder asking again gets ''execute'' again. AS001 unknown thread, AS002 bad argument, AS003 request over 1 MiB, AS006 the caller lost the job, AS030 the key was used for a different request.';

create or replace function ai.finish_side_effect(thread_id text, idempotency_key text, result jsonb, job_id bigint default null,
                                      fencing_token bigint default null)
returns ai.side_effects
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_key alias for $2;
  a_result alias for $3;
  a_job_id alias for $4;
  a_token alias for $5;
  v_now timestamptz := ai.now();
  e ai.side_effects;
begin
  perform ai._check_side_effect_args(a_thread_id, a_key, a_job_id, a_token, true);
  perform ai._check_document(a_result, 'result');
  -- With a job, the guard of every write made for a job (deploy/sessions_functions.sql); without
  -- one, a token is the attempt begin_side_effect returned, checked against the reservation.
  if a_job_id is not null then
    perform ai._fence(a_thread_id, a_job_id, a_token);
  end if;

  update ai.side_effects s
  set status = 'done', result = a_result, finished_at = v_now, updated_at = v_now, last_error = null
  where s.thread_id = a_thread_id and s.idempotency_key = a_key and s.status = 'reserved'
    and (case when a_job_id is null then s.job_id is null and s.attempt = a_token
              else s.job_id = a_job_id and s.fencing_token = a_token end)
  returning * into e;
  if found then
    return e;
  end if;

  select * into e from ai.side_effects s where s.thread_id = a_thread_id and s.idempotency_key = a_key;
  if not found then
    raise exception using errcode = 'AS001', message = format('side effect %s of thread %s not found', a_key, a_thread_id);
  end if;
  if e.status = 'done' and e.result = a_result and e.job_id is not distinct from a_job_id
     and (case when a_job_id is null then e.attempt = a_token else e.fencing_token = a_token end) then
    return e;  -- the same finish again: it landed the first time
  end if;
  raise exception using errcode = 'AS031',
    message = format('side effect %s of thread %s is not reserved by the caller', a_key, a_thread_id),
    detail = format('it is %s, attempt %s, held by job %s token %s', e.status, e.attempt,
                    coalesce(e.job_id::text, 'none'), coalesce(e.fencing_token::text, 'none'));
end
$$;
comment on function ai.finish_side_effect(text, text, jsonb, bigint, bigint) is
  'Stores the result (JSON up to 1 MiB) of a side effect the caller reserved and returns the ledger row: with a job, fenced on (job_id, fencing_token); without, fencing_token is the attempt begin_side_effect returned. Repeating the same finish returns the row. AS001 unknown key, AS002 bad argument, AS003 result too large, AS006 the caller lost the job, AS031 the caller does not hold the reservation (taken over, abandoned, finished with another result).';

create or replace function ai.abandon_side_effect(thread_id text, idempotency_key text, job_id bigint default null,
                                       fencing_token bigint default null, error text default null)
returns ai.side_effects
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_key alias for $2;
  a_job_id alias for $3;
  a_token alias for $4;
  v_now timestamptz := ai.now();
  e ai.side_effects;
begin
  perform ai._check_side_effect_args(a_thread_id, a_key, a_job_id, a_token, true);
  -- With a job, the guard of every write made for a job (deploy/sessions_functions.sql); without
  -- one, a token is the attempt begin_side_effect returned, checked against the reservation.
  if a_job_id is not null then
    perform ai._fence(a_thread_id, a_job_id, a_token);
  end if;

  update ai.side_effects s
  set status = 'abandoned', last_error = abandon_side_effect.error, reserved_until = null, updated_at = v_now
  where s.thread_id = a_thread_id and s.idempotency_key = a_key and s.status = 'reserved'
    and (case when a_job_id is null then s.job_id is null and s.attempt = a_token
              else s.job_id = a_job_id and s.fencing_token = a_token end)
  returning * into e;
  if found then
    return e;
  end if;
  select * into e from ai.side_effects s where s.thread_id = a_thread_id and s.idempotency_key = a_key;
  if not found then
    raise exception using errcode = 'AS001', message = format('side effect %s of thread %s not found', a_key, a_thread_id);
  end if;
  raise exception using errcode = 'AS031',
    message = format('side effect %s of thread %s is not reserved by the caller', a_key, a_thread_id),
    detail = format('it is %s, attempt %s', e.status, e.attempt);
end
$$;
comment on function ai.abandon_side_effect(text, text, bigint, bigint, text) is
  'Gives back a reservation after a clean failure (the action did not happen outside): the next begin_side_effect gets ''execute'' without taken_over. Fenced like finish_side_effect. Returns the ledger row. AS001 unknown key, AS002 bad argument, AS006 the caller lost the job, AS031 the caller does not hold the reservation.';

create or replace function ai.get_side_effect(thread_id text, idempotency_key text) returns ai.side_effects
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  e ai.side_effects;
begin
  select * into e from ai.side_effects s
  where s.thread_id = get_side_effect.thread_id and s.idempotency_key = get_side_effect.idempotency_key;
  if not found then
    raise exception using errcode = 'AS001',
      message = format('side effect %s of thread %s not found', get_side_effect.idempotency_key, get_side_effect.thread_id);
  end if;
  return e;
end
$$;
comment on function ai.get_side_effect(text, text) is 'The ledger row of one side effect. AS001 unknown key (or another tenant''s).';

revoke execute on function ai.idempotency_key(text[]),
  ai._check_side_effect_args(text, text, bigint, bigint, boolean),
  ai._side_effect_holder_alive(ai.side_effects, timestamptz),
  ai.begin_side_effect(text, text, jsonb, bigint, bigint, interval), ai.finish_side_effect(text, text, jsonb, bigint, bigint),
  ai.abandon_side_effect(text, text, bigint, bigint, text), ai.get_side_effect(text, text)
from public;
grant execute on function ai.idempotency_key(text[]),
  ai.begin_side_effect(text, text, jsonb, bigint, bigint, interval),
  ai.finish_side_effect(text, text, jsonb, bigint, bigint),
  ai.abandon_side_effect(text, text, bigint, bigint, text), ai.get_side_effect(text, text)
to ai_user, ai_service;

-- 0.1.0's job/token guards, two of the three shapes of one rule (the third was put_checkpoint's):
-- ai._fence (deploy/sessions_functions.sql) is the one now, called by every write made for a job.
-- Dropped here, by the last change of the release whose 0.1.0 functions called them.
drop function if exists ai._fence_side_effect(text, bigint, bigint);
drop function if exists ai._check_job_token(bigint, bigint);

commit;
