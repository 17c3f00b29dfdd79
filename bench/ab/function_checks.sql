-- Variant of bench/schema_ab.sh: the row CHECKs of the tables every append and graph step writes
-- (sessions, messages, checkpoints) as one call of their row-rule function, without the plain
-- expression in front of it (the form before 0.1.0 gave every table the same pattern).
alter table ai.agent_sessions drop constraint agent_sessions_row_check,
  add constraint agent_sessions_row_check check (ai._check_session_row(thread_id, status, config, last_seq, completed_at));
alter table ai.session_messages drop constraint session_messages_row_check,
  add constraint session_messages_row_check check (ai._check_message_row(seq, role, token_count, idempotency_key));
alter table ai.checkpoints drop constraint checkpoints_row_check,
  add constraint checkpoints_row_check check (ai._check_checkpoint_row(metadata, channel_versions));
