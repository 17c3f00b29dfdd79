-- Verify agent-state:messages on pg
select thread_id, seq, owner, role, content, token_count, turn, idempotency_key, created_at
from ai.session_messages where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.session_messages'::regclass);
select 'ai.append_message_idempotent(text, text, jsonb, integer, text, integer)'::regprocedure;
select 'ai.get_messages(text, bigint, integer)'::regprocedure;
