#!/usr/bin/env bash
# Queue throughput (issue 41 item 5): jobs/s of the Worker with 1, 4 and 16 concurrent handlers of
# 1 ms, a 4,000-job backlog over 1,024 threads enqueued in batch, beside pgqueuer and procrastinate
# (the bench extra: pip install -e 'python[bench]') and beside the Worker of main's code
# (BENCH_BASE_ROOT, a worktree of main: `git worktree add --detach /work/wt-base main`; without it that
# column is left out) on a database deployed from that tree, on the same server, in one run; dead
# tuples and table bytes per finished job; with pg_stat_statements in shared_preload_libraries, the server time by
# statement at 16 handlers (bench/throughput/bench_throughput.py). Run by `make bench`, or alone:
# `BENCH_BASE_ROOT=/work/wt-base bench/throughput.sh`. Each side imports its Worker from its tree when
# a point starts and deploys its tree's SQL at the start: run it from trees that do not change while it
# runs (a worktree of a commit: `git worktree add --detach /work/wt-new HEAD`), and any ref can be the base. Sizes: BENCH_TP_JOBS (4000),
# BENCH_TP_THREADS (1024), BENCH_TP_LEVELS ("1 4 16"), BENCH_TP_SYSTEMS, BENCH_TP_PREFETCH (the
# Worker's prefetch; unset: its default), BENCH_REPEATS (3).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
PY=${PYTHON:-$ROOT/.venv/bin/python}
. "$HERE/common.bash"
bench_init agent_state_bench_throughput
bench_database
bench_deploy
psql -X -q -d "$bench_url" -c "create extension if not exists pg_stat_statements" >/dev/null 2>&1 || true
base_url=""
if [ -n "${BENCH_BASE_ROOT:-}" ]; then
  # its scripts/sqitch.sh runs its own .venv's python: this tree's will do
  [ -x "$BENCH_BASE_ROOT/.venv/bin/python" ] || { echo "throughput bench: $BENCH_BASE_ROOT has no .venv:" \
    "ln -s $ROOT/.venv $BENCH_BASE_ROOT/.venv" >&2; exit 2; }
  base_url="${bench_url%%\?*}_base"; [[ "$bench_url" == *\?* ]] && base_url="$base_url?${bench_url#*\?}"
  base_owner_url=$(url_with "$base_url" "user=$deploy_user")
  psql -X -q -d "$admin_url" -c "drop database if exists agent_state_bench_throughput_base with (force)" \
    -c "create database agent_state_bench_throughput_base owner $deploy_user" >/dev/null
  [ -n "${BENCH_KEEP:-}" ] || trap 'for d in $bench_name agent_state_bench_throughput_base; do
    psql -X -q -d "$admin_url" -c "drop database if exists $d with (force)" >/dev/null 2>&1 || true; done' EXIT
  (cd "$BENCH_BASE_ROOT" && scripts/sqitch.sh "$base_owner_url" --quiet deploy >/dev/null)
  psql -X -q -d "$base_url" -c "create extension if not exists pg_stat_statements" >/dev/null 2>&1 || true
fi
BENCH_BASE_ROOT=${BENCH_BASE_ROOT:-} "$PY" "$HERE/throughput/bench_throughput.py" "$bench_url" "$base_url"
