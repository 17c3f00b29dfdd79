-- Revert agent-state:memory from pg
begin;
drop type ai.memory_item;
drop table ai_archive.memory_vectors;
drop table ai_archive.memory_items;
drop table ai.memory_vectors;
drop table ai.memory_items;
drop function ai._memory_ns(text[]);
drop function ai._check_memory_vectors_row(text, real[]);
drop function ai._check_memory_items_row(text[], text, jsonb, interval, timestamptz);
drop function ai._memory_labels_ok(text[]);
commit;
