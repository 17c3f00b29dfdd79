-- Verify agent-state:checkpoint_delta_depth on pg

select delta_depth from ai.checkpoint_blobs where false;
select delta_depth from ai_archive.checkpoint_blobs where false;
