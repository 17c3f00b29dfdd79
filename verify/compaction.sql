-- Verify agent-state:compaction on pg
select 'ai.session_messages_summaries'::regclass;
select 1 / count(*) from ai.error_codes where sqlstate = 'AS040';
