-- WAL per relation of the hot path (issue 20 item 8), as the superuser of a scratch database with
-- the schema deployed: N checkpoint puts (LangGraph-like metadata, one new channel value each) and
-- N stream batches, each in its own transaction (\gexec of psql: one statement per row), then
-- pg_walinspect's per-record view grouped by relation. Usage:
--   psql -d <db> -v n=500 -f bench/ab/wal_by_relation.sql
create extension if not exists pg_walinspect;
set synchronous_commit = off;
select set_config('ab.th', (ai.create_session('wal-' || gen_random_uuid())).thread_id, false) is not null as made;
select pg_current_wal_lsn() as lsn0 \gset
select format($q$select ai.put_checkpoint(%L, '', %L, null, 'msgpack', '\x0102', %L::jsonb, '{"messages": "%s"}', channel_values => row(array['messages'], array['%s'], array['msgpack'], array['\x0203'::bytea], null)::ai.checkpoint_values)$q$,
              current_setting('ab.th'), lpad(i::text, 12, '0'),
              format('{"source": "loop", "step": %s, "run_id": "r-%s", "parents": {}, "writes": {"node": {"x": 1}}}', i, i),
              i, i)
from generate_series(1, :n) i \gexec
select pg_current_wal_lsn() as lsn1 \gset
select set_config('ab.notify', ai._stream_channel(current_setting('ab.th'), 'k1'), false) is not null as ch \gset
select (ai.open_stream(current_setting('ab.th'), 'k1')) is not null as opened \gset
select pg_current_wal_lsn() as lsn2 \gset
select format($q$select ai.append_stream_chunks(%L, 'k1', %s, array['chunk %s a', 'chunk %s b'])$q$,
              current_setting('ab.th'), (i - 1) * 2 + 1, i, i)
from generate_series(1, :n) i \gexec
select pg_current_wal_lsn() as lsn3 \gset
set synchronous_commit = on;
select pg_current_xact_id() is not null as flushed \gset
\echo 'per put, WAL bytes by relation:'
select coalesce(c.relname, r.resource_manager) as relation, round(sum(r.record_length)::numeric / :n, 0) as bytes_per_put,
       round(100.0 * sum(r.record_length) / sum(sum(r.record_length)) over (), 1) as pct
from pg_get_wal_records_info(:'lsn0', :'lsn1') r
left join pg_class c on c.relfilenode = (regexp_match(r.block_ref, 'rel \d+/\d+/(\d+)'))[1]::oid
group by 1 order by 2 desc;
\echo 'per stream batch, WAL bytes by relation:'
select coalesce(c.relname, r.resource_manager) as relation, round(sum(r.record_length)::numeric / :n, 0) as bytes_per_batch
from pg_get_wal_records_info(:'lsn2', least(:'lsn3'::pg_lsn, pg_current_wal_flush_lsn())) r
left join pg_class c on c.relfilenode = (regexp_match(r.block_ref, 'rel \d+/\d+/(\d+)'))[1]::oid
group by 1 order by 2 desc;
