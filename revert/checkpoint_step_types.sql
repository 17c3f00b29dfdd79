-- Revert agent-state:checkpoint_step_types from pg
begin;

drop type ai.step_commit;
drop type ai.task_writes;
drop type ai.checkpoint_values;

commit;
