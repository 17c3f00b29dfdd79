-- Revert agent-state:schema from pg
begin;
drop schema ai;
commit;
