-- Variant of bench/schema_ab.sh: the row CHECKs of the tables every append and graph step writes
-- (sessions, messages, checkpoints) with their rules as a plain expression in front of the
-- row-rule function, as agent_jobs has it (the form measured against the function call alone,
-- docs/benchmarks.md "The 0.1.0 fold").
alter table ai.agent_sessions drop constraint agent_sessions_row_check,
  add constraint agent_sessions_row_check check (
    (pg_catalog.char_length(thread_id) between 1 and 255
     and status in ('active', 'waiting', 'completed', 'failed', 'cancelled')
     and pg_catalog.jsonb_typeof(config) = 'object'
     and (completed_at is not null) = (status in ('completed', 'failed', 'cancelled')))
    or ai._check_session_row(thread_id, status, config, completed_at));
alter table ai.session_messages drop constraint session_messages_row_check,
  add constraint session_messages_row_check check (
    (seq > 0 and role in ('system', 'user', 'assistant', 'tool_call', 'tool_result') and token_count >= 0
     and pg_catalog.char_length(idempotency_key) between 1 and 255)
    or ai._check_message_row(seq, role, token_count, idempotency_key));
alter table ai.checkpoints drop constraint checkpoints_row_check,
  add constraint checkpoints_row_check check (
    (pg_catalog.jsonb_typeof(metadata) = 'object' and pg_catalog.jsonb_typeof(channel_versions) = 'object')
    or ai._check_checkpoint_row(metadata, channel_versions));
