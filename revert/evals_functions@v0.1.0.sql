-- Revert agent-state:evals_functions from pg

begin;

drop function ai.get_eval_runs(text, text, integer);
drop function ai.record_eval_run(text, text, boolean, jsonb, jsonb, text, text);
drop function ai.trajectory(text, text, text);

commit;
