-- Revert agent-state:retrievals_functions from pg

begin;

drop function ai.get_turn_context(text, integer);
drop function ai.record_retrieval(text, integer, jsonb, text, bigint, bigint);

commit;
