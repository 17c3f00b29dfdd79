-- Verify agent-state:retrievals_functions on pg

begin;

select 'ai.record_retrieval(text, integer, jsonb, text, bigint, bigint)'::regprocedure;
select 'ai.get_turn_context(text, integer)'::regprocedure;

rollback;
