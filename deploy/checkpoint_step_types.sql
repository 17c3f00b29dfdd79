-- Deploy agent-state:checkpoint_step_types to pg
-- requires: checkpoints
--
-- The parts of a durable step, as ai.put_checkpoint takes them: one record per thing that belongs
-- together, instead of 23 positional arguments (issue 34 item 7). Each is written in a call's SQL
-- text as `row(...)::ai.<type>`; a NULL record (or one whose fields are all NULL) is "none".
-- Types only: the function that takes them is in checkpoints_functions, planned after this change.
begin;

-- The checkpoint's new channel values: parallel arrays, one element per (channel, version). A
-- NULL in bases (or bases NULL) is a whole value; a version names the version of the same channel
-- whose list this value extends with its items (a delta: deploy/checkpoint_deltas.sql).
create type ai.checkpoint_values as (
  channels text[],
  versions text[],
  types text[],
  blobs bytea[],
  bases text[]
);
comment on type ai.checkpoint_values is 'The new channel values of a checkpoint, for ai.put_checkpoint: parallel arrays channels/versions/types/blobs, and bases (NULL, or per value the version it extends as a delta; NULL elements are whole values).';

-- One task's pending writes, as ai.put_writes stores them: put_checkpoint's held writes, for the
-- parent checkpoint.
create type ai.task_writes as (
  task_id text,
  task_path text,
  idx integer[],
  channels text[],
  types text[],
  blobs bytea[]
);
comment on type ai.task_writes is 'One task''s pending writes, for ai.put_checkpoint (held writes for the parent checkpoint): the task, its path, and parallel arrays idx/channels/types/blobs.';

-- How a step's transaction commits: for which job (the fence, ai._fence: job_id and
-- fencing_token, both or neither) and how durably ('sync', or 'async': synchronous_commit off for
-- this transaction only).
create type ai.step_commit as (
  job_id bigint,
  fencing_token bigint,
  durability text
);
comment on type ai.step_commit is 'How a step written by ai.put_checkpoint commits: fenced by a job (job_id and fencing_token, both or neither) and its durability (''sync'' or ''async''; NULL record: no fence, sync).';

commit;
