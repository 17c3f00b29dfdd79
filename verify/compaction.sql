-- Verify agent-state:compaction on pg
select 'ai.context_window(text, integer, integer, real)'::regprocedure;
select 'ai.record_compaction(text, text, bigint, integer)'::regprocedure;
select 'ai.session_messages_summaries'::regclass;
select 1 / count(*) from ai.error_codes where sqlstate = 'AS040';
