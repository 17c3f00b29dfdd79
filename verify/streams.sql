-- Verify agent-state:streams on pg
select thread_id, stream_key, owner, role, turn, status, last_chunk, total_bytes, job_id, opened_at, last_chunk_at,
       closed_at, message_seq
from ai.message_streams where false;
select thread_id, stream_key, first_chunk, owner, chunks, created_at from ai.stream_batches where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.message_streams'::regclass);
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.stream_batches'::regclass);
select 1 / count(*)::int from ai._archived_tables where table_name in ('message_streams', 'stream_batches') having count(*) = 2;
select 1 / count(*)::int from ai.error_codes where sqlstate in ('AS050', 'AS051') having count(*) = 2;
