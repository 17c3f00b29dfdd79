#!/usr/bin/env bash
# The client's statements prepared vs unprepared, direct and through the private PgBouncer
# (docs/benchmarks.md, "Connections"), in a database of its own (bench/common.bash). Run by `make bench`.
# BENCH_CALLS (2000) x BENCH_REPEATS (7) per point.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
. "$HERE/common.bash"
bench_init agent_state_bench_connections
bench_database
bench_deploy
psql -X -q -v ON_ERROR_STOP=1 -d "$bench_url" >/dev/null <<'SQL'
do $$ begin
  if not exists (select from pg_roles where rolname = 'bench_tenant') then create role bench_tenant login; end if;
end $$;
grant ai_user to bench_tenant;
SQL
export BENCH_TENANT=bench_tenant
pooler=${POOLER_URL:+$POOLER_URL dbname=$bench_name}  # the private PgBouncer serves every database
"${VPY:-$ROOT/.venv/bin/python}" "$HERE/connections/prepare.py" "$bench_url" ${pooler:+"$pooler"}
