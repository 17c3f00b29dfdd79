-- Revert agent-state:compaction from pg
begin;
drop type ai.context_window;
drop index ai.session_messages_summaries;
delete from ai.error_codes where sqlstate = 'AS040';
commit;
