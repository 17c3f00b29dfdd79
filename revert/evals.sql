-- Revert agent-state:evals from pg
begin;
drop table ai.eval_runs;
drop type ai.trajectory_step;
commit;
