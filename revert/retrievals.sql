-- Revert agent-state:retrievals from pg
begin;
drop type ai.turn_context;
drop type ai.recorded_retrieval;
delete from ai._archived_tables where table_name = 'turn_retrievals';
drop table ai_archive.turn_retrievals;
drop table ai.turn_retrievals;
commit;
