-- Revert agent-state:session_items from pg
begin;
delete from ai._archived_tables where table_name = 'hidden_messages';
drop table ai_archive.hidden_messages;
drop table ai.hidden_messages;
commit;
