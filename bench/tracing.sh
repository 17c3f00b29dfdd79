#!/usr/bin/env bash
# The cost of tracing (issue 39; docs/observability.md): a worker's time per job and a graph run's
# time per step, with tracing off (AGENT_STATE_OTEL=off), with the OpenTelemetry API but no SDK,
# and with the SDK recording (spans dropped by the exporter, metrics in memory), against the same
# loops of a base tree without tracing: the python/ of BENCH_TRACING_BASE, a revision whose client
# runs on this tree's schema (default: 4792266, main just before tracing came in, whose client
# still runs on this schema; "" leaves the base out and takes tracing off as the reference).
# Paired rounds in fresh
# processes, medians of the per-round ratios (bench/tracing/ab.py). Sizes: BENCH_TRACING_ROUNDS,
# BENCH_TRACING_JOBS, BENCH_TRACING_STEPS. Works in a database of its own (bench/common.bash).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
ROUNDS=${BENCH_TRACING_ROUNDS:-${BENCH_REPEATS:-7}}
JOBS=${BENCH_TRACING_JOBS:-2000}
STEPS=${BENCH_TRACING_STEPS:-30}
BASE=${BENCH_TRACING_BASE-4792266}
if [ -n "$BASE" ] && ! git -C "$ROOT" cat-file -e "$BASE^{commit}" 2>/dev/null; then
  echo "tracing bench: revision $BASE is not in this clone (a shallow one?): no base tree, tracing off is the reference"
  BASE=""
fi
PY=${PYTHON:-$ROOT/.venv/bin/python}
. "$HERE/common.bash"
bench_init agent_state_bench_tracing
worker_url=$(url_with "$bench_url" user=bench_tracing)
bench_database
bench_deploy
psql -X -q -v ON_ERROR_STOP=1 -d "$bench_url" >/dev/null <<'SQL'
do $$ begin
  if not exists (select from pg_roles where rolname = 'bench_tracing') then create role bench_tracing login; end if;
end $$;
grant ai_service to bench_tracing;
SQL
psql -X -q -v ON_ERROR_STOP=1 -d "$worker_url" -v n="$JOBS" <<'SQL' >/dev/null
select count(ai.create_session('bt-' || i)) from generate_series(0, :n - 1) i;
SQL
base_path=""
if [ -n "$BASE" ]; then
  tree=$(mktemp -d)
  trap 'rm -rf "$tree"; [ -n "${BENCH_KEEP:-}" ] || psql -X -q -d "$admin_url" -c "drop database if exists $bench_name with (force)" >/dev/null 2>&1 || true' EXIT
  git -C "$ROOT" archive "$BASE" python | tar -x -C "$tree"
  base_path=$tree/python
fi
HEAD_PYTHONPATH=$ROOT/python BASE_PYTHONPATH=$base_path "$PY" "$HERE/tracing/ab.py" "$worker_url" "$ROUNDS" "$JOBS" "$STEPS"
