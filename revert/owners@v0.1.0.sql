-- Revert agent-state:owners from pg
begin;
drop function ai.act_as(text, boolean);
drop function ai.sees_all_owners();
drop function ai.current_owner();
drop function ai.calling_role();
commit;
