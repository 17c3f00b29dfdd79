-- Revert agent-state:usage from pg
begin;
drop type ai.recorded_usage;
delete from ai._archived_tables where table_name = 'usage_records';
drop table ai_archive.usage_records;
drop table ai.usage_records;
commit;
