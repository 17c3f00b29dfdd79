-- Revert agent-state:ulid from pg
begin;
drop function ai.ulid_time(text);
drop function ai.ulid();
commit;
