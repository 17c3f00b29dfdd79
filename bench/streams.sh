#!/usr/bin/env bash
# Streaming: the batching writer against one message write plus a round trip per batch, and a
# reader's latency in another process (bench/streams.py), as a tenant in a database of its own
# (bench/common.bash). `make bench` runs it. BENCH_REPEATS (5), BENCH_STREAM_CHUNKS (2000).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
. "$HERE/common.bash"
bench_init agent_state_bench_streams
bench_database
bench_deploy
psql -X -q -v ON_ERROR_STOP=1 -d "$bench_url" >/dev/null <<'SQL'
do $$ begin
  if not exists (select from pg_roles where rolname = 'bench_tenant') then create role bench_tenant login; end if;
end $$;
grant ai_user to bench_tenant;
-- the bare-SQL batches' table (streams.py), written by the tenant
create table bench_stream_batches (thread_id text, first_chunk int, chunks text[]);
grant all on bench_stream_batches to bench_tenant;
SQL
DATABASE_URL=$(url_with "$bench_url" user=bench_tenant) "${VPY:-$ROOT/.venv/bin/python}" "$HERE/streams.py"
