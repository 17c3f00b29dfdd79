-- Deploy agent-state:sessions_functions to pg
-- Reworked after v0.1.0; the tagged script is deploy/sessions_functions@v0.1.0.sql.
-- requires: sessions
-- requires: events
--
-- The functions and triggers of sessions (its tables, indexes and row rules:
-- deploy/sessions.sql). CREATE OR REPLACE throughout, so this change deploys over itself: after a
-- release, `sqitch rework sessions_functions` changes a function here (deploy/schema.sql, "Layout").
begin;

create or replace function ai._check_thread_id(thread_id text) returns void
language sql immutable parallel safe
as $$ select ai._check_text(thread_id, 'thread_id', 255) $$;
comment on function ai._check_thread_id(text) is 'Internal guard: raises AS002 unless thread_id is 1 to 255 characters.';

-- The owner of a thread the caller may see; AS001 when it does not exist or is another tenant's
-- (RLS hides those, so the two are one case). The guard that read-side functions start with.
create or replace function ai._session_owner(thread_id text) returns text
language plpgsql stable
as $$
declare
  v_owner text;
begin
  perform ai._check_thread_id(_session_owner.thread_id);
  select s.owner into v_owner from ai.agent_sessions s where s.thread_id = _session_owner.thread_id;
  if not found then
    raise exception using errcode = 'AS001', message = format('thread %s not found', _session_owner.thread_id);
  end if;
  return v_owner;
end
$$;
comment on function ai._session_owner(text) is 'Internal guard: the owner of a visible thread; AS002 for a bad id, AS001 when not found (or another tenant''s).';

-- The check at commit of a fenced transaction, queued once per transaction and (job, token): an
-- insert into ai.job_fences, deleted at once (its deferred constraint trigger,
-- ai._check_fence_at_commit, fires all the same), and a mark in the setting ai.fenced that says it
-- is queued. (The mark is only a shortcut: a caller that forged it would only switch off its own
-- fence, as one that never called ai.fenced_write does.) Called by ai.fenced_write and ai._fence
-- after their check now. No SET search_path: an internal helper, run only inside the schema
-- owner's pinned functions; every name in it is qualified.
create or replace function ai._queue_fence_check(job_id bigint, fencing_token bigint) returns void
language plpgsql volatile
as $$
declare
  v_mark text := pg_catalog.current_setting('ai.fenced', true);
  v_this text := ',' operator(pg_catalog.||) _queue_fence_check.job_id operator(pg_catalog.||) ':'
                 operator(pg_catalog.||) _queue_fence_check.fencing_token operator(pg_catalog.||) ',';
  v_fence tid;
begin
  if v_mark is null or pg_catalog.strpos(v_mark, v_this) operator(pg_catalog.=) 0 then
    insert into ai.job_fences (job_id, fencing_token)
    values (_queue_fence_check.job_id, _queue_fence_check.fencing_token)
    returning ctid into v_fence;
    delete from ai.job_fences f where f.ctid operator(pg_catalog.=) v_fence;
    perform pg_catalog.set_config('ai.fenced',
      case when v_mark is null or v_mark operator(pg_catalog.=) '' then v_this
           else v_mark operator(pg_catalog.||) pg_catalog.substr(v_this, 2) end,
      true);
  end if;
end
$$;
comment on function ai._queue_fence_check(bigint, bigint) is 'Internal: queues the check at commit of a fenced transaction (ai.job_fences'' deferred trigger) once per transaction and (job, token).';
revoke execute on function ai._queue_fence_check(bigint, bigint) from public;

-- The job/token rule of every write made for a job, in one function (issue 22): a write to a
-- thread that names a job (put_checkpoint, put_writes, append_message_idempotent, the side-effect
-- ledger, streams, usage, retrievals, request_human) calls it, and nothing writes the rule again.
--   * neither job_id nor fencing_token: not a fenced write, nothing to check;
--   * one without the other: AS002 (the side-effect ledger takes a token without a job, the
--     attempt begin_side_effect returned, and calls this only with a job);
--   * the caller holds the job now (ai.fenced_write's test, read in the same probe of the job as
--     its thread; ai.fenced_write raises AS006 stale token or lease ended, AS001 a job it cannot
--     see), checked again when its transaction commits (ai._queue_fence_check);
--   * the job is the thread's: a job's token is no licence to write to another thread (AS002).
--     thread_id NULL is a call whose thread is the job's own (request_human).
-- Defined here, in the first change of the release to be deployed, so that every later change's
-- functions find it; PL/pgSQL, so that the tables and functions of later changes it names are
-- looked up when it runs.
-- No SET search_path (issue 34 item 8: a SET clause costs each call a search-path switch, some
-- 20 us of a fenced append): an internal helper, run only inside the schema owner's pinned
-- functions, whose path it inherits; every name in it is qualified.
create or replace function ai._fence(thread_id text, job_id bigint, fencing_token bigint) returns void
language plpgsql volatile
as $$
declare
  v_now timestamptz;
  v_thread text;
begin
  if _fence.job_id is null then
    if _fence.fencing_token is null then
      return;
    end if;
    raise exception using errcode = 'AS002', message = 'job_id must not be NULL when fencing_token is given';
  end if;
  if _fence.fencing_token is null then
    raise exception using errcode = 'AS002', message = 'fencing_token must not be NULL when job_id is given';
  end if;
  -- The held job and its thread in one probe of the job's primary key (issue 34 item 8): what
  -- ai.fenced_write checks now (the same predicate), and the thread the job advances. A job not
  -- held under this token goes to ai.fenced_write, which raises its error (AS006, AS001).
  v_now := ai.now();
  select j.thread_id into v_thread
  from ai.agent_jobs j
  where j.job_id = _fence.job_id and j.status = 'IN_PROGRESS' and j.fencing_token = _fence.fencing_token
    and (j.lease_expires_at > v_now or ai._lease_held(j.lease_expires_at, j.updated_at, v_now, ai._server_start()));
  if not found then
    perform ai.fenced_write(_fence.job_id, _fence.fencing_token);
    -- (it returns only when the job became held in between: its commit check is queued)
    select j.thread_id into v_thread from ai.agent_jobs j where j.job_id = _fence.job_id;
  else
    perform ai._queue_fence_check(_fence.job_id, _fence.fencing_token);
  end if;
  if _fence.thread_id is not null and v_thread is distinct from _fence.thread_id then
    raise exception using errcode = 'AS002',
      message = pg_catalog.format('job %s does not advance thread %s', _fence.job_id, _fence.thread_id);
  end if;
end
$$;
comment on function ai._fence(text, bigint, bigint) is 'Internal guard of every write made for a job: nothing without job_id and fencing_token; AS002 for one without the other; the job held under the token, read with its thread in one probe, and checked again at commit (as ai.fenced_write: AS006 lease lost, AS001 unknown job); AS002 when the job is not the thread''s (thread_id NULL: the job''s own thread).';
revoke execute on function ai._fence(text, bigint, bigint) from public;

-- A session as readers see it (issues 20, 33): appends and checkpoint puts do not write the
-- session row, so last_seq and current_checkpoint_id are computed from the rows they stand for:
-- the thread's newest message seq (the primary key, read backwards) and its newest root-namespace
-- checkpoint (the same). The table holds neither (the change sessions_dead_columns dropped
-- them); the reads (get_session, create_session, set_session_status here, restore_session,
-- list_sessions, find_sessions) return ai.session: the columns a 0.1.0 reader of the table got,
-- of the same names, types and order, so a caller reads the same row.
-- The type is the reads' return shape, so it is defined here, with the first of them, and not in
-- a table change: the bundle (scripts/bundle.sh) puts this change at its first place in the plan,
-- before any later table change, and a return type must exist when its function is created.
-- Created only when absent, so the change deploys over itself; the revert drops it.
do $$
begin
  if pg_catalog.to_regtype('ai.session') is null then
    create type ai.session as (
      thread_id text,
      owner text,
      status text,
      config jsonb,
      current_checkpoint_id text,
      last_seq bigint,
      created_at timestamptz,
      updated_at timestamptz,
      completed_at timestamptz
    );
  end if;
end
$$;
comment on type ai.session is
  'A session as the reads return it: the columns of ai.agent_sessions, with current_checkpoint_id (the newest checkpoint of the root namespace, NULL without) and last_seq (the newest message''s seq, 0 without) computed from the thread''s rows.';
-- The reads below returned the table's row type before ai.session: a deploy over that version
-- drops them first (CREATE OR REPLACE cannot change a return type); over itself it drops nothing.
do $$
declare
  f pg_catalog.regprocedure;
begin
  for f in select p.oid::pg_catalog.regprocedure from pg_catalog.pg_proc p
           where p.pronamespace = 'ai'::pg_catalog.regnamespace
             and p.proname in ('_session_as_read', 'get_session', 'create_session', 'set_session_status')
             and p.prorettype = 'ai.agent_sessions'::pg_catalog.regtype loop
    execute pg_catalog.format('drop function %s', f);
  end loop;
end
$$;

-- PL/pgSQL: the tables it reads are deployed after this change's first version.
create or replace function ai._session_as_read(s ai.agent_sessions) returns ai.session
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
begin
  return row(s.thread_id, s.owner, s.status, s.config,
             (select c.checkpoint_id from ai.checkpoints c
              where c.thread_id = s.thread_id and c.checkpoint_ns = ''
              order by c.checkpoint_id desc limit 1),
             coalesce((select m.seq from ai.session_messages m where m.thread_id = s.thread_id
                       order by m.seq desc limit 1), 0),
             s.created_at, s.updated_at, s.completed_at)::ai.session;
end
$$;
comment on function ai._session_as_read(ai.agent_sessions) is 'Internal: a session row as the reads return it (ai.session), last_seq (newest message seq, 0 without) and current_checkpoint_id (newest root-namespace checkpoint) computed.';

create or replace function ai.get_session(thread_id text) returns ai.session
language plpgsql stable
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  s ai.agent_sessions;
begin
  perform ai._check_thread_id(get_session.thread_id);
  select * into s from ai.agent_sessions a where a.thread_id = get_session.thread_id;
  if not found then
    raise exception using errcode = 'AS001', message = format('thread %s not found', get_session.thread_id);
  end if;
  return ai._session_as_read(s);
end
$$;
comment on function ai.get_session(text) is
  'The session row of a thread, last_seq (the newest message''s seq) and current_checkpoint_id (the newest root-namespace checkpoint) computed from the thread''s rows. Raises AS001 when the thread does not exist or belongs to another tenant.';

revoke execute on function ai._check_thread_id(text), ai._session_owner(text), ai._session_as_read(ai.agent_sessions), ai.get_session(text) from public;
grant execute on function ai.get_session(text)
to ai_user, ai_service;

-- ---------------------------------------------------------------------------------------------

-- The allowed status changes, in one place:
--   active  -> waiting | completed | failed | cancelled
--   waiting -> active  | completed | failed | cancelled
--   completed, failed, cancelled: final.
-- Setting the status a session already has is a no-op, so a retried call succeeds.
create or replace function ai._session_transition_allowed(from_status text, to_status text) returns boolean
language sql immutable parallel safe
as $$
  select from_status = to_status
      or (from_status in ('active', 'waiting')
          and to_status in ('active', 'waiting', 'completed', 'failed', 'cancelled'))
$$;
comment on function ai._session_transition_allowed(text, text) is 'Internal: whether a session may move from one status to another.';

-- The same rule for raw UPDATEs (the schema owner's: tenants hold no table privilege): the table
-- itself refuses a forbidden move (a finished session stays finished). The WHEN clause keeps the
-- trigger off every update that leaves status alone.
-- The trigger runs AFTER the row is written (an error rolls the statement back all the same): a
-- BEFORE ROW UPDATE trigger would make each UPDATE of a session lock the row once more, with a WAL
-- record, before looking at its WHEN clause, and the guard changes no column.
create or replace function ai._guard_session_status() returns trigger
language plpgsql
as $$
begin
  if not ai._session_transition_allowed(old.status, new.status) then
    raise exception using errcode = 'AS004',
      message = format('session %s cannot go from %s to %s', old.thread_id, old.status, new.status);
  end if;
  return new;
end
$$;
comment on function ai._guard_session_status() is 'Internal trigger: refuses a status change the transition table forbids, however it is written.';

-- Replaced only when it differs from this definition (as pg_get_triggerdef prints it): CREATE OR
-- REPLACE TRIGGER locks the table against every writer (SHARE ROW EXCLUSIVE) and queues behind any
-- open transaction that wrote to it, so a deploy over an unchanged trigger takes no table lock; a
-- changed one waits at most lock_timeout (docs/operations.md, "Upgrading under a live fleet").
do $do$
begin
  if (select pg_catalog.pg_get_triggerdef(t.oid) from pg_catalog.pg_trigger t
      where t.tgrelid = 'ai.agent_sessions'::pg_catalog.regclass and t.tgname = 'agent_sessions_status_transition')
     is distinct from $t$CREATE TRIGGER agent_sessions_status_transition AFTER UPDATE OF status ON ai.agent_sessions FOR EACH ROW WHEN ((old.status IS DISTINCT FROM new.status)) EXECUTE FUNCTION ai._guard_session_status()$t$ then
    if pg_catalog.current_setting('lock_timeout') = '0' then
      perform pg_catalog.set_config('lock_timeout', '5s', true);
    end if;
    create or replace trigger agent_sessions_status_transition
      after update of status on ai.agent_sessions
      for each row when (old.status is distinct from new.status)
      execute function ai._guard_session_status();
  end if;
end
$do$;

-- The one place a session row is created (create_session, a first checkpoint or pending write of
-- a new thread, the target of a copy). ON CONFLICT without a target: the table has two unique
-- keys (thread_id, and (thread_id, owner) that child tables reference), and naming only one let
-- a concurrent create of the same thread by the same owner fail 23505 on the other instead of
-- doing nothing. Returns whether this call created the row (then with a start event); when not,
-- the row exists (the caller's, committed by a concurrent transaction, which the caller's next
-- statement sees; or another tenant's, which RLS hides).
create or replace function ai._start_session(thread_id text, owner text, config jsonb, start_payload jsonb)
returns boolean
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_owner alias for $2;
  a_config alias for $3;
  v_now timestamptz := ai.now();
begin
  insert into ai.agent_sessions (thread_id, owner, config, created_at, updated_at)
  values (a_thread_id, a_owner, a_config, v_now, v_now)
  on conflict do nothing;
  if not found then
    return false;
  end if;
  -- An archived id stays taken until restored (deploy/archive_conflicts.sql). Looked up after the
  -- insert: a sweep archiving a hot session of this id held the row the insert waited on, and
  -- its reservation committed with the delete, so this statement sees it.
  if exists (select from ai_archive.archived_thread_ids r where r.thread_id = a_thread_id) then
    delete from ai.agent_sessions s where s.thread_id = a_thread_id;
    return false;
  end if;
  insert into ai.session_events (thread_id, owner, kind, payload, created_at)
  values (a_thread_id, a_owner, 'start', start_payload, v_now);
  return true;
end
$$;
comment on function ai._start_session(text, text, jsonb, jsonb) is 'Internal: creates a session row with its start event and returns true, or returns false when the thread id exists (whoever owns it) or is archived (reserved until restored). Safe against concurrent creates of the same thread and a concurrent archive of it.';

create or replace function ai.create_session(thread_id text default null, config jsonb default '{}')
returns ai.session
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id text := coalesce($1, pg_catalog.gen_random_uuid()::text);
  a_config alias for $2;
  s ai.agent_sessions;
begin
  perform ai._check_thread_id(a_thread_id);
  perform ai._check_document(a_config, 'config', must_be_object => true);

  -- New: created with a start event. Ours already (a retry, or a concurrent create): returned
  -- unchanged. Another tenant's: RLS hides it, and all we may say is that the id is taken.
  perform ai._start_session(a_thread_id, ai.current_owner(), a_config,
                            pg_catalog.jsonb_build_object('config', a_config));
  select * into s from ai.agent_sessions a where a.thread_id = a_thread_id;
  if not found and exists (select from ai_archive.agent_sessions a where a.thread_id = a_thread_id) then
    -- the caller's own archived thread (RLS shows no other tenant's): reserved until restored
    raise exception using errcode = 'AS005',
      message = format('thread %s is archived: its id stays taken until it is restored', a_thread_id),
      hint = 'an operator brings it back with ai.restore_session; or pass NULL to get a fresh id';
  end if;
  if not found or (s.owner <> ai.current_owner() and not ai.sees_all_owners()) then
    raise exception using errcode = 'AS005',
      message = format('thread id %s is not available', a_thread_id),
      hint = 'pass NULL to get a fresh id';
  end if;
  return ai._session_as_read(s);  -- an existing session's (a retry's) last_seq and checkpoint too
end
$$;
comment on function ai.create_session(text, jsonb) is
  'Creates a session owned by the caller and records a start event; thread_id NULL makes a fresh UUID. Calling it again for a thread the caller owns (also concurrently) returns the existing row unchanged. Returns ai.session (last_seq and current_checkpoint_id computed, as get_session does). AS002 bad argument, AS003 config too large, AS005 the id belongs to another tenant or to an archived session (reserved until ai.restore_session).';

-- The move itself, for set_session_status and for the queue's own moves (request_human,
-- resolve_human, a cancel of a job that waits for a person), which want no session read back:
-- on a Citus formation that read (ai._session_as_read) does not plan inside the trigger of the
-- coordinator's job row that cancels a waiting job, and on one server it costs two lookups no
-- caller of these reads.
create or replace function ai._move_session_status(thread_id text, status text) returns ai.agent_sessions
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  a_thread_id alias for $1;
  a_status alias for $2;
  v_now timestamptz := ai.now();
  v_from text;
  s ai.agent_sessions;
begin
  perform ai._check_thread_id(a_thread_id);
  if a_status is null or a_status not in ('active', 'waiting', 'completed', 'failed', 'cancelled') then
    raise exception using errcode = 'AS002',
      message = format('status %s is not one of active, waiting, completed, failed, cancelled',
                       coalesce(pg_catalog.quote_literal(a_status), 'NULL'));
  end if;

  select * into s from ai.agent_sessions a where a.thread_id = a_thread_id for no key update;
  if not found then
    raise exception using errcode = 'AS001', message = format('thread %s not found', a_thread_id);
  end if;
  if s.status = a_status then
    return s;
  end if;
  if not ai._session_transition_allowed(s.status, a_status) then
    raise exception using errcode = 'AS004',
      message = format('session %s cannot go from %s to %s', a_thread_id, s.status, a_status);
  end if;

  v_from := s.status;
  update ai.agent_sessions a
  set status = a_status,
      updated_at = v_now,
      completed_at = case when a_status in ('completed', 'failed', 'cancelled') then v_now end
  where a.thread_id = a_thread_id
  returning * into s;

  insert into ai.session_events (thread_id, owner, kind, payload, created_at)
  values (s.thread_id, s.owner, 'status', pg_catalog.jsonb_build_object('from', v_from, 'to', a_status), v_now);
  return s;
end
$$;
comment on function ai._move_session_status(text, text) is
  'Internal (ai.set_session_status and the queue''s moves of a session: request_human, resolve_human, the cancel of a job that waits): moves a session to a new status and records a status event, as ai.set_session_status documents, and returns the row. AS001 unknown thread, AS002 unknown status, AS004 transition not allowed.';

create or replace function ai.set_session_status(thread_id text, status text) returns ai.session
language plpgsql volatile
security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  s ai.agent_sessions;
begin
  s := ai._move_session_status($1, $2);
  return ai._session_as_read(s);
end
$$;
comment on function ai.set_session_status(text, text) is
  'Moves a session to a new status (active, waiting, completed, failed, cancelled) and records a status event. active and waiting may go anywhere; completed, failed and cancelled are final; the same status again is a no-op. Returns the session as get_session does. AS001 unknown thread, AS002 unknown status, AS004 transition not allowed.';

revoke execute on function ai._guard_session_status() from public;  -- a trigger needs no grant
revoke execute on function ai._session_transition_allowed(text, text), ai.create_session(text, jsonb),
  ai.set_session_status(text, text), ai._move_session_status(text, text), ai._start_session(text, text, jsonb, jsonb) from public;
grant execute on function ai.create_session(text, jsonb), ai.set_session_status(text, text)
to ai_user, ai_service;

commit;
