-- Revert agent-state:streams from pg
begin;
drop type ai.stream_state;
delete from ai._archived_tables where table_name in ('message_streams', 'stream_batches');
drop table ai_archive.stream_batches;
drop table ai_archive.message_streams;
drop table ai.stream_batches;
drop table ai.message_streams;
delete from ai.error_codes where sqlstate in ('AS050', 'AS051');
commit;
