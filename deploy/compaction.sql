-- Deploy agent-state:compaction to pg
-- requires: messages
--
-- Context compaction changes what is sent to the model, never what is kept. A summary is one
-- more message of the thread: role system, content {"compaction": {"from_seq": a,
-- "through_seq": b}, "text": "..."}, key 'compaction:<b>'. It stands for every message up to
-- b (the summarizer is given the previous summary plus messages a..b, so summaries chain over
-- contiguous ranges). The originals stay in ai.session_messages untouched.
-- A context window is the newest summary, then every message after its through_seq that is not
-- itself a summary. It reads the newest summary through a small partial index and the tail
-- through the primary key, so its cost depends on the tail, not on the thread's length.
begin;

insert into ai.error_codes (sqlstate, name, description) values
  ('AS040', 'stale_compaction', 'A newer compaction of the thread already covers as much or more: the summary was not stored.');

create index session_messages_summaries on ai.session_messages (thread_id, seq desc)
  where role = 'system' and content ? 'compaction';

-- What ai.context_window returns: always one row.
create type ai.context_window as (
  messages jsonb,               -- [{seq, role, content, token_count, is_summary}], summary first
  total_tokens bigint,          -- tokens of those messages
  compaction_due boolean,       -- total_tokens > threshold * window_tokens
  compact_from_seq bigint,      -- the range a new summary should cover, or NULL when the tail is
  compact_through_seq bigint,   --   no longer than keep_last
  summary_through_seq bigint,   -- what the newest summary covers (0: none yet)
  last_seq bigint
);
comment on type ai.context_window is 'The messages to send to the model now, and whether (and over which range) to compact.';

commit;
