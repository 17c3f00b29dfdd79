-- Revert agent-state:compaction_functions from pg

begin;

drop function ai.record_compaction(text, text, bigint, integer);
drop function ai.context_window(text, integer, integer, real);
drop function ai._newest_summary(text);

commit;
