#!/usr/bin/env bash
# Capacity (issues 16, 20): a fleet of durable agent runs with a scripted model (1-2 s per node),
# on agent_state (AsyncAgentStateSaver, the queue's functions, fenced messages and side effects)
# and on the stock stack (LangGraph's AsyncPostgresSaver, a bare SKIP LOCKED jobs table, plain
# messages and side-effect tables), at each run length (nodes per run) and level of concurrent
# runs, interleaved in one run; prints the table, writes bench/capacity/results.json,
# docs/capacity.svg (p99 node-save latency against concurrent runs) and the markdown table with
# the ratios against stock-saver-per-run (bench/capacity/results.md); then the per-call profile
# (per_op.py). Run by `make bench`.
# Sizes: BENCH_CAPACITY_NODES (default 24,96 nodes per run), _LEVELS (50,100,200,400), _WARMUP
# (10 s), _WINDOW (20 s), _STACKS (ours, stock-saver-per-run, stock; ours-lz4 on demand),
# _POOL (20), _PROCS (driver processes, default 1), _OP_REPEAT/_OP_ROUNDS (per_op.py), _PER_OP (0: no
# per-call profile).
# The default run: 2 run lengths x 4 levels x 3 stacks x ~33 s = ~13 min, then the per-call
# profile. BENCH_CAPACITY_OUT: where results.json goes (the .md beside it); _SVG: the chart.
# Works in a database of its own on the server of $DATABASE_URL (bench/common.bash).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
. "$HERE/common.bash"
bench_init agent_state_bench_capacity
PY=${PYTHON:-$ROOT/.venv/bin/python}
BENCH_KEEP=${BENCH_CAPACITY_KEEP:-${BENCH_KEEP:-}} bench_database
bench_deploy
psql -X -q -v ON_ERROR_STOP=1 -d "$bench_url" -f "$HERE/capacity/setup.sql" >/dev/null
# pg_walinspect (the WAL by relation) needs a superuser to install: without it the bench says so
psql -X -q -d "$bench_url" -c "create extension if not exists pg_walinspect" >/dev/null 2>&1 \
  || echo "capacity bench: no pg_walinspect (a superuser installs it): no WAL breakdown by relation" >&2

tenant_url=$(url_with "$bench_url" user=bench_cap_tenant)
worker_url=$(url_with "$bench_url" user=bench_cap_worker)
stock_url=$(url_with "$bench_url" user=bench_cap_stock options=-csearch_path%3Dbench_stock)
out=${BENCH_CAPACITY_OUT:-$HERE/capacity/results.json}
"$PY" "$HERE/capacity/capacity.py" "$bench_url" "$tenant_url" "$worker_url" "$stock_url" "$out"
"$PY" "$HERE/capacity/report.py" "$out" "${BENCH_CAPACITY_SVG:-$ROOT/docs/capacity.svg}" "${out%.json}.md"
[ "${BENCH_CAPACITY_PER_OP:-1}" = 0 ] \
  || "$PY" "$HERE/capacity/per_op.py" "$bench_url" "$tenant_url" "$worker_url" "$stock_url"
