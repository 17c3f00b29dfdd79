-- Revert agent-state:usage from pg
begin;
drop function ai.usage_summary(timestamptz, timestamptz, text[]);
drop function ai.record_usage(text, text, text, bigint, bigint, numeric, jsonb, bigint, bigint);
drop type ai.recorded_usage;
delete from ai._archived_tables where table_name = 'usage_records';
drop table ai_archive.usage_records;
drop table ai.usage_records;
commit;
