-- Deploy agent-state:checkpoint_write_refs to pg
-- requires: checkpoint_delta_depth
--
-- A delta that names the held write instead of copying it (issue 34 item 8). A node that returns
-- new messages through add_messages writes them as its task's pending write (ai.checkpoint_writes,
-- for the parent checkpoint), and the step's checkpoint stores the same items again as the delta
-- of the list channel (deploy/checkpoint_deltas.sql): the same bytes twice a step. When a delta's
-- bytes equal a pending write of the parent checkpoint (same channel, type and blob, idx >= 0:
-- rows that are never overwritten), ai.put_checkpoint stores the delta as a reference to that
-- write: blob NULL and the write's key in these columns; ai._rebuilt_value reads the write's blob.
--
-- No foreign key holds the reference: its check on every deleted write (prune, delete_thread)
-- would scan the thread's values, and a partial index for it would cost most of what the bytes
-- saved. Every path that deletes writes keeps the rule instead, under the session lock it already
-- takes: prune_checkpoints and delete_for_runs copy a named write's bytes into the value first,
-- copies and forks copy the bytes (tests/pgtap/put_checkpoint/
-- a_value_that_names_a_write_stays_readable_through_every_deleting_and_copying_path.sql).
begin;

alter table ai.checkpoint_blobs
  add column write_checkpoint_id text collate "C",
  add column write_task_id text collate "C",
  add column write_idx integer;
comment on column ai.checkpoint_blobs.write_task_id is
  'Set (with write_checkpoint_id and write_idx) for a delta stored as a reference to the pending write in ai.checkpoint_writes that holds the same bytes (blob NULL): (thread_id, checkpoint_ns, write_checkpoint_id, write_task_id, write_idx).';
alter table ai_archive.checkpoint_blobs
  add column write_checkpoint_id text collate "C",
  add column write_task_id text collate "C",
  add column write_idx integer;

commit;
