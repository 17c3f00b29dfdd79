#!/usr/bin/env bash
# Long-term memory: LangGraph's PostgresStore against AgentStateStore (as a tenant, RLS on) for put,
# get, search with a filter and search with a text query, on the same server, with
# BENCH_MEMORY_ITEMS items (default 10,000) spread over BENCH_MEMORY_TENANTS tenants (default 4;
# PostgresStore has no tenants: a namespace label per tenant instead), every call tenant 0's.
# Prints ms per call, medians of BENCH_REPEATS rounds (default 3) of BENCH_SECONDS (default 3)
# per point, the two stores in turn, and the ratios. Run by `make bench`, in a database of its own
# (bench/common.bash).
#
# As a superuser both stores are loaded in bulk SQL (bench/memory/load.sql: a million items in
# minutes, where put() takes most of an hour), tenant 0 first; a copy of the database is taken
# then (the other tenants holding nothing) and the others are loaded after, so tenant 0's calls
# are also measured beside the other tenants' items at 0 and at full size, the two databases in
# turn (as bench/tenant_reads.sh). Otherwise both are filled through put() and that part is skipped.
#   BENCH_MEMORY_ITEMS=1000000 BENCH_MEMORY_TENANTS=10 bench/memory.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
ITEMS=${BENCH_MEMORY_ITEMS:-10000}
TENANTS=${BENCH_MEMORY_TENANTS:-4}
PY=${PYTHON:-$ROOT/.venv/bin/python}
. "$HERE/common.bash"
bench_init agent_state_bench_memory
bench_database
bench_deploy
DATABASE_URL=$bench_url "$PY" "$HERE/memory/bench_memory.py" prepare
if [ "$bench_super" != 1 ]; then
  DATABASE_URL=$bench_url "$PY" "$HERE/memory/bench_memory.py" load-put
  echo "(not a superuser: loaded through put(); the other tenants' items at 0 and at full size are not measured)"
  DATABASE_URL=$bench_url "$PY" "$HERE/memory/bench_memory.py" measure
  exit 0
fi
per=$((ITEMS / TENANTS))
load() {  # first last: tenants first..last, both stores
  psql -X -q -v ON_ERROR_STOP=1 -v first="$1" -v last="$2" -v per="$per" -v store_schema=bench_langgraph_store \
    -d "$bench_url" -f "$HERE/memory/load.sql" >/dev/null
}
load 0 0
empty_name=${bench_name}_empty
psql -X -q -v ON_ERROR_STOP=1 -d "$admin_url" -c "drop database if exists $empty_name with (force)" \
  -c "create database $empty_name template $bench_name owner \"$deploy_user\"" >/dev/null
if [ -n "${BENCH_KEEP:-}" ]; then
  trap - EXIT  # both kept: $bench_name and $empty_name
else
  trap 'psql -X -q -d "$admin_url" -c "drop database if exists $empty_name with (force)" -c "drop database if exists $bench_name with (force)" >/dev/null 2>&1 || true' EXIT
fi
empty_url=${bench_url/\/$bench_name/\/$empty_name}
started=$(date +%s)
[ "$TENANTS" -gt 1 ] && load 1 $((TENANTS - 1))
echo "bulk load: $((per * TENANTS)) items in each store in $(( $(date +%s) - started + 0 )) s (tenants 1..$((TENANTS - 1)) after the copy)"
psql -X -q -d "$bench_url" -c "vacuum analyze" >/dev/null
psql -X -q -d "$empty_url" -c "vacuum analyze" >/dev/null
DATABASE_URL=$bench_url BENCH_MEMORY_EMPTY_URL=$empty_url "$PY" "$HERE/memory/bench_memory.py" measure
