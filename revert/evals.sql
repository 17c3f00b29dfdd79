-- Revert agent-state:evals from pg
begin;
drop function ai.get_eval_runs(text, text, integer);
drop function ai.record_eval_run(text, text, boolean, jsonb, jsonb, text, text);
drop table ai.eval_runs;
drop function ai.trajectory(text, text, text);
drop type ai.trajectory_step;
commit;
