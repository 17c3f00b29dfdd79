-- Revert agent-state:lean_session_writes from pg
-- Back to one CHECK per rule and BEFORE triggers on ai.agent_sessions.
begin;

drop trigger agent_sessions_status_transition on ai.agent_sessions;
create trigger agent_sessions_status_transition
  before update of status on ai.agent_sessions
  for each row when (old.status is distinct from new.status)
  execute function ai._guard_session_status();
drop trigger agent_sessions_last_seq on ai.agent_sessions;
create trigger agent_sessions_last_seq
  before update of last_seq on ai.agent_sessions
  for each row when (new.last_seq is distinct from old.last_seq + 1)
  execute function ai._guard_last_seq();

alter table ai.checkpoints
  drop constraint checkpoints_row_check,
  add constraint checkpoints_metadata_check check (pg_catalog.jsonb_typeof(metadata) = 'object'),
  add constraint checkpoints_channel_versions_check check (pg_catalog.jsonb_typeof(channel_versions) = 'object');
alter table ai.session_messages
  drop constraint session_messages_row_check,
  add constraint session_messages_seq_check check (seq > 0),
  add constraint session_messages_role_check check (role in ('system', 'user', 'assistant', 'tool_call', 'tool_result')),
  add constraint session_messages_token_count_check check (token_count >= 0),
  add constraint session_messages_idempotency_key_check check (pg_catalog.char_length(idempotency_key) between 1 and 255);
alter table ai.agent_sessions
  drop constraint agent_sessions_row_check,
  add constraint agent_sessions_thread_id_check check (pg_catalog.char_length(thread_id) between 1 and 255),
  add constraint agent_sessions_status_check check (status in ('active', 'waiting', 'completed', 'failed', 'cancelled')),
  add constraint agent_sessions_config_check check (pg_catalog.jsonb_typeof(config) = 'object'),
  add constraint agent_sessions_last_seq_check check (last_seq >= 0),
  add constraint agent_sessions_completed_at check ((completed_at is not null) = (status in ('completed', 'failed', 'cancelled')));

drop function ai._check_session_row(text, text, jsonb, bigint, timestamptz), ai._check_message_row(bigint, text, integer, text),
  ai._check_checkpoint_row(jsonb, jsonb);

commit;
