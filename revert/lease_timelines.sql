-- Revert agent-state:lease_timelines from pg

begin;

drop table ai.lease_timelines;

commit;
