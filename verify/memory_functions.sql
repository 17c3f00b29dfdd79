-- Verify agent-state:memory_functions on pg
begin;
select 'ai.put_memory(text[], text, jsonb, interval, text[], jsonb)'::regprocedure;
select 'ai.get_memory(text[], text, boolean)'::regprocedure;
select 'ai.delete_memory(text[], text)'::regprocedure;
select 'ai.search_memory(text[], jsonb, text, integer, integer, boolean, real[], text)'::regprocedure;
select 'ai.list_memory_namespaces(text[], text[], integer, integer, integer)'::regprocedure;
select 'ai.sweep_memory(integer)'::regprocedure;
select 'ai.batch_memory(jsonb)'::regprocedure;
select 'ai.create_memory_vector_index(integer, text)'::regprocedure;
select 'ai.archive_memory(text[], integer)'::regprocedure;
select 'ai.restore_memory(text[], integer)'::regprocedure;
rollback;
