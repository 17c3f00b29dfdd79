-- Revert agent-state:messages from pg
begin;
drop type ai.appended_message;
drop table ai.session_messages;
drop function ai._check_message_row(bigint, text, integer, text);
commit;
