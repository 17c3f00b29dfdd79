-- Verify agent-state:evals on pg
select eval_id, thread_id, owner, replay_thread_id, from_checkpoint_id, candidate, passed, scores, diff, created_at
from ai.eval_runs where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.eval_runs'::regclass);
