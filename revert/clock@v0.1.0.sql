-- Revert agent-state:clock from pg
begin;
drop function ai.now();
commit;
