-- Revert agent-state:session_items from pg
begin;
drop function ai.hide_messages(text);
drop function ai.hide_last_message(text);
drop function ai.visible_messages(text, integer);
drop function ai.append_messages(text, jsonb);
drop function ai._json_integer(jsonb, text);
delete from ai._archived_tables where table_name = 'hidden_messages';
drop table ai_archive.hidden_messages;
drop table ai.hidden_messages;
commit;
