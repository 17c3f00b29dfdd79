-- Deploy agent-state:checkpoint_read_plans to pg
-- requires: checkpoints
--
-- get_checkpoint and list_checkpoints read by key only: one backward probe (or range) of a
-- thread's checkpoints, one primary-key probe per channel value, one range of pending writes.
-- Their plans are generic (one plan for every call), so the planner prices them from the tables'
-- statistics alone, and those can be badly skewed: after one thread staged thousands of pending
-- writes on one checkpoint (a fan-out step), ANALYZE saw one (thread, checkpoint) for all of
-- ai.checkpoint_writes, the planner expected every probe to return the whole table, and every
-- get_checkpoint of every thread read all of it sequentially (15 ms instead of 1 ms; found by
-- bench/checkpoints.sh). Sequential and bitmap-free shapes are priced out here, so the probes stay
-- probes whatever the statistics say. (A scan with no usable key, such as listing every thread
-- without a filter, still runs: enable_seqscan = off only makes it expensive to the planner.)
begin;

alter function ai.get_checkpoint(text, text, text) set enable_seqscan = off;
alter function ai.list_checkpoints(text, text, text, integer, jsonb) set enable_seqscan = off;
alter function ai._list_checkpoints_any(text, text, text, integer, jsonb) set enable_seqscan = off;

commit;
