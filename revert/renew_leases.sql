-- Revert agent-state:renew_leases from pg
begin;

drop function ai.renew_leases(text, bigint[], bigint[], interval);

commit;
