-- Verify agent-state:checkpoint_write_refs on pg

select write_checkpoint_id, write_task_id, write_idx from ai.checkpoint_blobs where false;
select write_checkpoint_id, write_task_id, write_idx from ai_archive.checkpoint_blobs where false;
