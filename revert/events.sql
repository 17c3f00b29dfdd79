-- Revert agent-state:events from pg
begin;
drop table ai.session_events;
commit;
