-- Revert agent-state:queue_workers from pg

begin;

drop table ai.queue_workers;

commit;
