-- Deploy agent-state:sessions_dead_columns to pg
-- requires: sessions
-- requires: retention
-- requires: comments_0_2
-- requires: sessions_functions
--
-- ai.agent_sessions without the columns nothing writes (issue 33). 0.1.0 kept a message counter
-- (last_seq) and the newest root checkpoint (current_checkpoint_id) on the session row, updated by
-- every append and every put; since issue 20 appends and puts leave the row alone and the reads
-- compute both from the rows they stand for (ai._session_as_read, returning ai.session with the
-- same columns). Stored, they only went stale (after three appends last_seq read 0). Dropped here,
-- from the table and its ai_archive twin, with what hung on them:
--   * the row check: ai._check_session_row without its last_seq argument (the other rules are the
--     same, so every stored row keeps passing them);
--   * fillfactor 80: it left a fifth of each page empty for the HOT updates every append made;
--     a session row is now updated only when its status changes, so the default (100) packs it.
--     RESET changes no page already written; new rows fill their pages.
-- Planned after every functions change: a body that read or wrote the columns (0.1.0's append
-- bumped last_seq) is gone before the columns go, so a worker of either release running while
-- this deploys never meets a missing column. DROP COLUMN rewrites no row, but the tables take an
-- ACCESS EXCLUSIVE lock until the commit (its wait bounded by the lock_timeout below when none is
-- set), so the new CHECK is added NOT VALID, which reads no row: a validating ADD would read every
-- session under that lock (3 s a million rows measured), stalling every write of the fleet. The
-- next change, sessions_row_check_validated, validates it in a transaction of its own, which
-- blocks no writer. New and updated rows are checked from this change on.
begin;

select pg_catalog.set_config('lock_timeout', '5s', true) where pg_catalog.current_setting('lock_timeout') = '0';

create function ai._check_session_row(thread_id text, status text, config jsonb, completed_at timestamptz)
returns boolean
language plpgsql immutable parallel safe
as $$
begin
  if (pg_catalog.char_length(thread_id) between 1 and 255) is not true then
    raise exception using errcode = '23514', constraint = 'agent_sessions_row_check',
      message = 'a thread_id has 1 to 255 characters';
  end if;
  if status is null or status not in ('active', 'waiting', 'completed', 'failed', 'cancelled') then
    raise exception using errcode = '23514', constraint = 'agent_sessions_row_check',
      message = format('session status %s is not active, waiting, completed, failed or cancelled',
                       coalesce(pg_catalog.quote_literal(status), 'NULL'));
  end if;
  if pg_catalog.jsonb_typeof(config) is distinct from 'object' then
    raise exception using errcode = '23514', constraint = 'agent_sessions_row_check',
      message = 'a session''s config is a JSON object';
  end if;
  if (completed_at is not null) <> (status in ('completed', 'failed', 'cancelled')) then
    raise exception using errcode = '23514', constraint = 'agent_sessions_row_check',
      message = 'completed_at is set exactly when a session is completed, failed or cancelled';
  end if;
  return true;
end
$$;
comment on function ai._check_session_row(text, text, jsonb, timestamptz) is
  'Internal: the row rules of ai.agent_sessions, called by its CHECK for every row written (and of its ai_archive twin): thread_id length, status, config an object, completed_at with a final status; raises 23514 naming the rule a row breaks, true when none is broken.';
revoke execute on function ai._check_session_row(text, text, jsonb, timestamptz) from public;

-- the hot table first, then its twin: the order in which an archive sweep takes them
alter table ai.agent_sessions
  drop constraint agent_sessions_row_check,
  drop column current_checkpoint_id,
  drop column last_seq,
  add constraint agent_sessions_row_check check (ai._check_session_row(thread_id, status, config, completed_at)) not valid,
  reset (fillfactor);
alter table ai_archive.agent_sessions
  drop constraint agent_sessions_row_check,
  drop column current_checkpoint_id,
  drop column last_seq,
  add constraint agent_sessions_row_check check (ai._check_session_row(thread_id, status, config, completed_at)) not valid;

drop function ai._check_session_row(text, text, jsonb, bigint, timestamptz);

comment on table ai.agent_sessions is
  'One row per agent run (thread): owner, status, configuration and times. The newest message''s seq and the newest root checkpoint are not stored: the reads compute them (ai.session).';

commit;
