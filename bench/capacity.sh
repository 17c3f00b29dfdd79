#!/usr/bin/env bash
# Capacity (issue 16): a fleet of durable agent runs with a scripted model (1-2 s per node), on
# agent_state (AsyncAgentStateSaver, the queue's functions, fenced messages and side effects) and
# on the stock stack (LangGraph's AsyncPostgresSaver, a bare SKIP LOCKED jobs table, plain
# messages and side-effect tables), levels of concurrent runs interleaved in one run; prints the
# table, writes bench/capacity/results.json, docs/capacity.svg (p99 node-save latency against
# concurrent runs) and the markdown table (bench/capacity/results.md). Run by `make bench`.
# Sizes: BENCH_CAPACITY_LEVELS (default 50,100,200,400: what a 2-core VM that also runs the
# driver carries), _WARMUP (10 s), _WINDOW (20 s), _NODES (24 per run), _STACKS (ours, stock and
# the A/B variants ours-lz4, ours-1by1, stock-saver-per-run; capacity.py says what each is).
# The default run takes about 5 stacks x 4 levels x 45 s = 15 min; then the per-call profile.
# Works in a database of its own (created and dropped here) on the server of $DATABASE_URL.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
url=${DATABASE_URL:?DATABASE_URL is set by make bench}
[[ "$url" == *\?* ]] && { echo "capacity bench: DATABASE_URL with parameters is not supported" >&2; exit 2; }
PY=${PYTHON:-$ROOT/.venv/bin/python}
db=agent_state_bench_capacity
bench_url="${url%/*}/$db"
admin_url="${url%/*}/postgres"

psql -X -q -d "$admin_url" -c "drop database if exists $db with (force)" -c "create database $db" >/dev/null
[ -n "${BENCH_CAPACITY_KEEP:-}" ] || trap 'psql -X -q -d "$admin_url" -c "drop database if exists $db with (force)" >/dev/null 2>&1 || true' EXIT
"$ROOT/scripts/sqitch.sh" "$bench_url" --quiet deploy >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d "$bench_url" -f "$HERE/capacity/setup.sql" >/dev/null

out=${BENCH_CAPACITY_OUT:-$HERE/capacity/results.json}
"$PY" "$HERE/capacity/capacity.py" "$bench_url" "$bench_url?user=bench_cap_tenant" "$bench_url?user=bench_cap_worker" \
  "$bench_url?user=bench_cap_stock&options=-csearch_path%3Dbench_stock" "$out"
"$PY" "$HERE/capacity/report.py" "$out" "$ROOT/docs/capacity.svg" "${out%.json}.md"
"$PY" "$HERE/capacity/per_op.py" "$bench_url" "$bench_url?user=bench_cap_tenant" "$bench_url?user=bench_cap_worker" \
  "$bench_url?user=bench_cap_stock&options=-csearch_path%3Dbench_stock"
