-- Revert agent-state:metrics from pg

begin;

drop function ai.metrics();

commit;
