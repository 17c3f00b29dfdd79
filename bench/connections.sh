#!/usr/bin/env bash
# The client's statements prepared vs unprepared, direct and through the private PgBouncer
# (docs/benchmarks.md, "Connections"). Run by `make bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
url=${DATABASE_URL:?DATABASE_URL is set by make bench}
pooler=${POOLER_URL:-}
psql -X -q -v ON_ERROR_STOP=1 -d "$url" >/dev/null <<'SQL'
do $$ begin
  if not exists (select from pg_roles where rolname = 'bench_tenant') then create role bench_tenant login; end if;
end $$;
grant ai_user to bench_tenant;
SQL
export BENCH_TENANT=bench_tenant
"${VPY:-.venv/bin/python}" bench/connections/prepare.py "$url" ${pooler:+"$pooler"}
