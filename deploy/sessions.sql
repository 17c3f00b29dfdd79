-- Deploy agent-state:sessions to pg
-- requires: owners
-- requires: clock
begin;

-- The rules of a row, one at a time (the CHECK of ai.agent_sessions is one call of this function): raises
-- 23514 naming the first rule broken, a NULL breaking a rule as well; true when none is.
create function ai._check_session_row(thread_id text, status text, config jsonb, last_seq bigint,
                                      completed_at timestamptz)
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
  if (last_seq >= 0) is not true then
    raise exception using errcode = '23514', constraint = 'agent_sessions_row_check',
      message = format('last_seq must be 0 or more, not %s', coalesce(last_seq::text, 'NULL'));
  end if;
  if (completed_at is not null) <> (status in ('completed', 'failed', 'cancelled')) then
    raise exception using errcode = '23514', constraint = 'agent_sessions_row_check',
      message = 'completed_at is set exactly when a session is completed, failed or cancelled';
  end if;
  return true;
end
$$;
-- 0.1.0's comment, not true: the CHECK calls the function for every row. The change
-- comments_0_2 sets the current one (a released table change is not edited).
comment on function ai._check_session_row(text, text, jsonb, bigint, timestamptz) is
  'Internal: called by the CHECK of ai.agent_sessions rows only for a row that breaks a rule (thread_id length, status, config an object, last_seq, completed_at with a final status); raises 23514 naming the rule, true when none is broken.';

revoke execute on function ai._check_session_row(text, text, jsonb, bigint, timestamptz) from public;
-- internal helpers (ai._*): no EXECUTE grant; only the schema owner's functions call them

-- One row per agent run. thread_id is global (a caller may bring its own, e.g. LangGraph's),
-- so the one thing a tenant can learn about another's thread is that its id is taken.
-- (thread_id, owner) is unique too: every child table references that pair, which makes it
-- impossible to hang a row of one tenant off another tenant's thread.
create table ai.agent_sessions (
  thread_id text primary key,
  owner text not null default ai.current_owner(),
  status text not null default 'active',
  config jsonb not null default '{}',
  current_checkpoint_id text,
  last_seq bigint not null default 0,
  created_at timestamptz not null default ai.now(),
  updated_at timestamptz not null default ai.now(),
  completed_at timestamptz,
  constraint agent_sessions_thread_owner unique (thread_id, owner),
  -- The rules of a row (deploy/schema.sql, "Row rules"): never NULL, as every column it reads is NOT NULL.
  constraint agent_sessions_row_check check (ai._check_session_row(thread_id, status, config, last_seq, completed_at))
) with (fillfactor = 80);  -- 0.1.0's: every append rewrote last_seq and updated_at (HOT room)
-- 0.1.0's comments, no longer true: appends and checkpoint puts do not write this row (issue 20),
-- and the change sessions_dead_columns drops last_seq and current_checkpoint_id, the row check's
-- last_seq argument and the fillfactor, and sets the table's comment (a released table change is
-- not edited).
comment on table ai.agent_sessions is 'One row per agent run (thread): owner, status, configuration, message counter and current checkpoint.';
comment on column ai.agent_sessions.last_seq is 'The seq of the newest message; appends bump it under the row lock, so seq has no gaps.';
comment on column ai.agent_sessions.current_checkpoint_id is 'The newest checkpoint of the root namespace (kept by the checkpoint functions).';

-- Not on updated_at: a status change rewrites it (0.1.0: every append), and an index on it would
-- forbid HOT updates.
create index agent_sessions_owner_created on ai.agent_sessions (owner, created_at desc);

alter table ai.agent_sessions enable row level security;
alter table ai.agent_sessions force row level security;
create policy agent_sessions_by_owner on ai.agent_sessions
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));

-- No table privilege for ai_user or ai_service: they reach this table only through the functions,
-- which run as the schema owner (SECURITY DEFINER; docs/security.md).

commit;
