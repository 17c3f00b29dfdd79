-- Revert agent-state:metrics_indexes from pg

begin;

drop index ai.agent_jobs_troubled;
drop index ai.side_effects_taken_over;

commit;
