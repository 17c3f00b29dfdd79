-- Deploy agent-state:messages to pg
-- requires: sessions
begin;

-- The rules of a row, one at a time (the CHECK of ai.session_messages is one call of this function): raises
-- 23514 naming the first rule broken, a NULL breaking a rule as well; true when none is.
create function ai._check_message_row(seq bigint, role text, token_count integer, idempotency_key text)
returns boolean
language plpgsql immutable parallel safe
as $$
begin
  if (seq > 0) is not true then
    raise exception using errcode = '23514', constraint = 'session_messages_row_check',
      message = format('a message seq is 1 or more, not %s', coalesce(seq::text, 'NULL'));
  end if;
  if role is null or role not in ('system', 'user', 'assistant', 'tool_call', 'tool_result') then
    raise exception using errcode = '23514', constraint = 'session_messages_row_check',
      message = format('message role %s is not system, user, assistant, tool_call or tool_result',
                       coalesce(pg_catalog.quote_literal(role), 'NULL'));
  end if;
  if (token_count >= 0) is not true then
    raise exception using errcode = '23514', constraint = 'session_messages_row_check',
      message = format('token_count must be 0 or more, not %s', coalesce(token_count::text, 'NULL'));
  end if;
  if (pg_catalog.char_length(idempotency_key) between 1 and 255) is not true then
    raise exception using errcode = '23514', constraint = 'session_messages_row_check',
      message = 'an idempotency key has 1 to 255 characters';
  end if;
  return true;
end
$$;
-- 0.1.0's comment, not true: the CHECK calls the function for every row. The change
-- comments_0_2 sets the current one (a released table change is not edited).
comment on function ai._check_message_row(bigint, text, integer, text) is
  'Internal: called by the CHECK of ai.session_messages rows only for a row that breaks a rule (seq, role, token_count, idempotency key); raises 23514 naming the rule, true when none is broken.';

revoke execute on function ai._check_message_row(bigint, text, integer, text) from public;
-- internal helpers (ai._*): no EXECUTE grant; only the schema owner's functions call them

-- The conversation, append-only. seq is 1, 2, 3, ... per thread with no gap: 0.1.0 took it from
-- a counter on the session row (ai.agent_sessions.last_seq) under that row's lock; since issue 20
-- it is the thread's newest seq + 1, read from this table's primary key in the insert itself
-- (deploy/messages_functions.sql), so a rollback returns the number too. Every message has an idempotency key (the caller's, or a
-- sha256 of thread, role, content and turn); the unique index on (thread_id, key) turns a retry
-- into a read of the original row.
create table ai.session_messages (
  thread_id text not null,
  seq bigint not null,
  owner text not null,
  role text not null,
  content jsonb not null,
  token_count integer not null,
  turn integer,
  idempotency_key text not null,
  created_at timestamptz not null default ai.now(),
  primary key (thread_id, seq),
  foreign key (thread_id, owner) references ai.agent_sessions (thread_id, owner) on delete cascade,
  -- The rules of a row (deploy/schema.sql, "Row rules"): never NULL, as every column it reads is NOT NULL.
  constraint session_messages_row_check check (ai._check_message_row(seq, role, token_count, idempotency_key))
);
comment on table ai.session_messages is 'The messages of each thread, append-only, numbered by seq from 1 with no gap.';
comment on column ai.session_messages.token_count is 'Tokens as given by the caller, or estimated as ceil(bytes of the JSON text / 4) when not given.';
comment on column ai.session_messages.idempotency_key is 'The caller''s key, or sha256 over (thread_id, role, content, turn); unique per thread.';

create unique index session_messages_idempotency_key on ai.session_messages (thread_id, idempotency_key);

alter table ai.session_messages enable row level security;
alter table ai.session_messages force row level security;
create policy session_messages_by_owner on ai.session_messages
  using (owner = (select ai.current_owner()) or (select ai.sees_all_owners()))
  with check (owner = (select ai.current_owner()) or (select ai.sees_all_owners()));

-- What an append returns: the message row, and whether this call wrote it.
create type ai.appended_message as (
  thread_id text, seq bigint, owner text, role text, content jsonb, token_count integer,
  turn integer, idempotency_key text, created_at timestamptz, inserted boolean
);
comment on type ai.appended_message is 'A message row plus inserted: true when this call wrote it, false when it was a retry.';

commit;
