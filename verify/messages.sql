-- Verify agent-state:messages on pg
select thread_id, seq, owner, role, content, token_count, turn, idempotency_key, created_at
from ai.session_messages where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.session_messages'::regclass);
select 'ai._check_message_row(bigint, text, integer, text)'::regprocedure;
select 1 / count(*) from pg_catalog.pg_constraint where conname = 'session_messages_row_check' and conrelid = 'ai.session_messages'::regclass;
