-- Deploy agent-state:lean_session_writes to pg
-- requires: session_lifecycle
-- requires: messages
-- requires: checkpoints
--
-- What queue_lean_writes did for ai.agent_jobs, for the tables every graph step and every message
-- writes: ai.agent_sessions (each put_checkpoint moves current_checkpoint_id, each append moves
-- last_seq), ai.checkpoints and ai.session_messages.
--
-- * Postgres rebuilds every CHECK expression of a table from its stored text once per statement
--   that writes the table (stringToNode), whichever columns the statement sets. The rules of each
--   table now sit in one CHECK calling one function (SQLSTATE 23514 as before, with a message that
--   names the rule).
-- * A BEFORE ROW UPDATE trigger makes each UPDATE of a session lock the row once more, with a WAL
--   record, before it looks at the trigger's WHEN clause. The two guards of ai.agent_sessions
--   (the status transitions, last_seq) change no column, so they run AFTER the row is written:
--   an error rolls the statement back all the same.
begin;

create function ai._check_session_row(thread_id text, status text, config jsonb, last_seq bigint,
                                      completed_at timestamptz)
returns boolean
language plpgsql immutable parallel safe
as $$
begin
  if pg_catalog.char_length(thread_id) between 1 and 255
     and status in ('active', 'waiting', 'completed', 'failed', 'cancelled')
     and pg_catalog.jsonb_typeof(config) = 'object' and last_seq >= 0
     and (completed_at is not null) = (status in ('completed', 'failed', 'cancelled')) then
    return true;
  end if;
  if pg_catalog.char_length(thread_id) not between 1 and 255 then
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
  if last_seq < 0 then
    raise exception using errcode = '23514', constraint = 'agent_sessions_row_check',
      message = format('last_seq must be 0 or more, not %s', last_seq);
  end if;
  raise exception using errcode = '23514', constraint = 'agent_sessions_row_check',
    message = 'completed_at is set exactly when a session is completed, failed or cancelled';
end
$$;
comment on function ai._check_session_row(text, text, jsonb, bigint, timestamptz) is
  'Internal: the CHECK of ai.agent_sessions rows (thread_id length, status, config an object, last_seq, completed_at with a final status); raises 23514 naming the rule a row breaks.';

create function ai._check_message_row(seq bigint, role text, token_count integer, idempotency_key text)
returns boolean
language plpgsql immutable parallel safe
as $$
begin
  if seq > 0 and role in ('system', 'user', 'assistant', 'tool_call', 'tool_result') and token_count >= 0
     and pg_catalog.char_length(idempotency_key) between 1 and 255 then
    return true;
  end if;
  if seq <= 0 then
    raise exception using errcode = '23514', constraint = 'session_messages_row_check',
      message = format('a message seq is 1 or more, not %s', seq);
  end if;
  if role is null or role not in ('system', 'user', 'assistant', 'tool_call', 'tool_result') then
    raise exception using errcode = '23514', constraint = 'session_messages_row_check',
      message = format('message role %s is not system, user, assistant, tool_call or tool_result',
                       coalesce(pg_catalog.quote_literal(role), 'NULL'));
  end if;
  if token_count < 0 then
    raise exception using errcode = '23514', constraint = 'session_messages_row_check',
      message = format('token_count must be 0 or more, not %s', token_count);
  end if;
  raise exception using errcode = '23514', constraint = 'session_messages_row_check',
    message = 'an idempotency key has 1 to 255 characters';
end
$$;
comment on function ai._check_message_row(bigint, text, integer, text) is
  'Internal: the CHECK of ai.session_messages rows (seq, role, token_count, idempotency key); raises 23514 naming the rule a row breaks.';

create function ai._check_checkpoint_row(metadata jsonb, channel_versions jsonb)
returns boolean
language plpgsql immutable parallel safe
as $$
begin
  if pg_catalog.jsonb_typeof(metadata) = 'object' and pg_catalog.jsonb_typeof(channel_versions) = 'object' then
    return true;
  end if;
  raise exception using errcode = '23514', constraint = 'checkpoints_row_check',
    message = 'a checkpoint''s metadata and channel_versions are JSON objects';
end
$$;
comment on function ai._check_checkpoint_row(jsonb, jsonb) is
  'Internal: the CHECK of ai.checkpoints rows (metadata and channel_versions are JSON objects); raises 23514.';

revoke execute on function ai._check_session_row(text, text, jsonb, bigint, timestamptz),
  ai._check_message_row(bigint, text, integer, text), ai._check_checkpoint_row(jsonb, jsonb) from public;
-- internal helpers (ai._*): no EXECUTE grant; only the schema owner's functions call them

alter table ai.agent_sessions
  drop constraint agent_sessions_thread_id_check,
  drop constraint agent_sessions_status_check,
  drop constraint agent_sessions_config_check,
  drop constraint agent_sessions_last_seq_check,
  drop constraint agent_sessions_completed_at,
  add constraint agent_sessions_row_check check (ai._check_session_row(thread_id, status, config, last_seq, completed_at));
alter table ai.session_messages
  drop constraint session_messages_seq_check,
  drop constraint session_messages_role_check,
  drop constraint session_messages_token_count_check,
  drop constraint session_messages_idempotency_key_check,
  add constraint session_messages_row_check check (ai._check_message_row(seq, role, token_count, idempotency_key));
alter table ai.checkpoints
  drop constraint checkpoints_metadata_check,
  drop constraint checkpoints_channel_versions_check,
  add constraint checkpoints_row_check check (ai._check_checkpoint_row(metadata, channel_versions));

drop trigger agent_sessions_status_transition on ai.agent_sessions;
create trigger agent_sessions_status_transition
  after update of status on ai.agent_sessions
  for each row when (old.status is distinct from new.status)
  execute function ai._guard_session_status();
drop trigger agent_sessions_last_seq on ai.agent_sessions;
create trigger agent_sessions_last_seq
  after update of last_seq on ai.agent_sessions
  for each row when (new.last_seq is distinct from old.last_seq + 1)
  execute function ai._guard_last_seq();

commit;
