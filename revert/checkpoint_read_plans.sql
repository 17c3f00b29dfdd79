-- Revert agent-state:checkpoint_read_plans from pg
begin;

alter function ai.get_checkpoint(text, text, text) reset enable_seqscan;
alter function ai.list_checkpoints(text, text, text, integer, jsonb) reset enable_seqscan;
alter function ai._list_checkpoints_any(text, text, text, integer, jsonb) reset enable_seqscan;

commit;
