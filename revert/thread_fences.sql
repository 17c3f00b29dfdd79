-- Revert agent-state:thread_fences from pg

begin;

delete from ai._archived_tables where table_name = 'thread_fences';
drop table ai_archive.thread_fences;
drop table ai.thread_fences;

commit;
