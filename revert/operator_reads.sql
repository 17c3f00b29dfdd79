-- Revert agent-state:operator_reads from pg
begin;
drop index ai.agent_sessions_created;

commit;
