-- :n finished sessions (completed a year ago) of 50 messages and 2 events each, for the archiver.
-- Bulk-loaded with triggers off (session_replication_role = replica).
set session_replication_role = replica;
insert into ai.agent_sessions (thread_id, owner, status, created_at, updated_at, completed_at)
select 'done-' || i, 'bench_worker', 'completed', now() - interval '366 days', now() - interval '365 days',
       now() - interval '365 days'
from generate_series(1, :n) i;
insert into ai.session_messages (thread_id, seq, owner, role, content, token_count, idempotency_key, created_at)
select 'done-' || i, s, 'bench_worker', case when s % 2 = 0 then 'assistant' else 'user' end,
       jsonb_build_object('text', repeat('word ', 40), 's', s), 50, 'k' || s, now() - interval '366 days'
from generate_series(1, :n) i, generate_series(1, 50) s;
insert into ai.session_events (thread_id, owner, kind, payload, created_at)
select 'done-' || i, 'bench_worker', k, '{}', now() - interval '366 days'
from generate_series(1, :n) i, unnest(array['start', 'status']) k;
reset session_replication_role;
analyze ai.agent_sessions;
analyze ai.session_messages;
