-- Revert agent-state:errors from pg
begin;
drop function ai._check_limit(integer, text, integer);
drop function ai._check_document(jsonb, text, boolean);
drop function ai._check_text(text, text, integer);
drop function ai._max_document_bytes();
drop table ai.error_codes;
commit;
