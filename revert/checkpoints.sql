-- Revert agent-state:checkpoints from pg
begin;
drop type ai.checkpoint_tuple;
drop table ai.deleted_threads;
drop table ai.checkpoint_writes;
drop table ai.checkpoint_blobs;
drop table ai.checkpoints;
drop function ai._check_checkpoint_row(jsonb, jsonb);
-- current_checkpoint_id pointed at rows that are gone now
update ai.agent_sessions set current_checkpoint_id = null where current_checkpoint_id is not null;
delete from ai.error_codes where sqlstate = 'AS020';
commit;
