-- Revert agent-state:checkpoint_delta_depth from pg
--
-- The depth is derived from the chains (base_version), which stay: dropping it loses nothing.
begin;

alter table ai.checkpoint_blobs drop column delta_depth;
alter table ai_archive.checkpoint_blobs drop column delta_depth;

commit;
