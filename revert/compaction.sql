-- Revert agent-state:compaction from pg
begin;
drop function ai.record_compaction(text, text, bigint, integer);
drop function ai.context_window(text, integer, integer, real);
drop function ai._newest_summary(text);
drop type ai.context_window;
drop index ai.session_messages_summaries;
delete from ai.error_codes where sqlstate = 'AS040';
commit;
