-- Revert agent-state:memory_functions from pg
begin;
drop function ai.batch_memory(jsonb);
drop function ai.sweep_memory(integer);
drop function ai.list_memory_namespaces(text[], text[], integer, integer, integer);
drop function ai.search_memory(text[], jsonb, text, integer, integer, boolean, real[], text);
drop function ai.delete_memory(text[], text);
drop function ai.get_memory(text[], text, boolean);
drop function ai.put_memory(text[], text, jsonb, interval, text[], jsonb);
drop function ai._memory_labels_match(text[], text[], boolean);
drop function ai._memory_labels(jsonb, text);
drop function ai._memory_embeddings(jsonb);
drop function ai._memory_similarity(real[], real[], text);
drop function ai._memory_containment(jsonb);
drop function ai._memory_compare(jsonb, text, jsonb);
drop function ai._memory_matches(jsonb, jsonb);
drop function ai._check_memory_filter(jsonb);
drop function ai._check_memory_namespace(text[], text, boolean);
commit;
