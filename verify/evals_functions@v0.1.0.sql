-- Verify agent-state:evals_functions on pg

begin;

select 'ai.trajectory(text, text, text)'::regprocedure;
select 'ai.record_eval_run(text, text, boolean, jsonb, jsonb, text, text)'::regprocedure;
select 'ai.get_eval_runs(text, text, integer)'::regprocedure;

rollback;
