-- Verify agent-state:compaction_functions on pg

begin;

select 'ai._newest_summary(text)'::regprocedure;
select 'ai.context_window(text, integer, integer, real)'::regprocedure;
select 'ai.record_compaction(text, text, bigint, integer)'::regprocedure;

rollback;
