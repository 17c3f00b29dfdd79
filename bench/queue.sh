#!/usr/bin/env bash
# Queue: claim + complete through ai.claim_job/ai.complete_job and in batches of 100
# (ai.claim_jobs/ai.complete_jobs), side by side with the same loop as the bare SQL of the design
# and with pgbench's single-row UPDATE (the ceiling), at 1, 2, 4 and 8 clients, without and with
# 1M finished jobs in the table; then the Python Worker against pgqueuer at 1, 2 and 4 worker
# processes. Medians of BENCH_REPEATS runs; ratios against the bare SQL. Run by `make bench`.
# Works in a database of its own (created and dropped here) on the server of $DATABASE_URL.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
url=${DATABASE_URL:?DATABASE_URL is set by make bench}
[[ "$url" == *\?* ]] && { echo "queue bench: DATABASE_URL with parameters is not supported" >&2; exit 2; }
REPEATS=${BENCH_REPEATS:-3}
SINGLE=${BENCH_QUEUE_SINGLE:-1000}    # claim+complete loops per client
BATCHES=${BENCH_QUEUE_BATCHES:-20}    # batches of 100 per client
FINISHED=${BENCH_QUEUE_FINISHED:-1000000}
PYJOBS=${BENCH_QUEUE_PYJOBS:-10000}
PY=${PYTHON:-$ROOT/.venv/bin/python}
db=agent_state_bench_queue
bench_url="${url%/*}/$db"
worker_url="$bench_url?user=bench_worker"
admin_url="${url%/*}/postgres"

psql -X -q -d "$admin_url" -c "drop database if exists $db with (force)" -c "create database $db" >/dev/null
[ -n "${BENCH_QUEUE_KEEP:-}" ] || trap 'psql -X -q -d "$admin_url" -c "drop database if exists $db with (force)" >/dev/null 2>&1 || true' EXIT
"$ROOT/scripts/sqitch.sh" "$bench_url" --quiet deploy >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d "$bench_url" -f "$HERE/queue/setup.sql" >/dev/null 2>&1
[ -n "${BENCH_QUEUE_SETUP_ONLY:-}" ] && exit 0

run() {  # script clients loops -> median tps over the repeats; each run on freshly filled queues
  local script=$1 clients=$2 loops=$3 per=$4 runs=()
  for _ in $(seq "$REPEATS"); do
    psql -X -q -v ON_ERROR_STOP=1 -v n=$((clients * loops * per)) -d "$bench_url" -f "$HERE/queue/fill.sql" >/dev/null
    runs+=("$(pgbench -n -f "$HERE/queue/$script" -c "$clients" -j "$clients" -t "$loops" "$worker_url" 2>/dev/null \
      | sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p')")
  done
  printf '%s\n' "${runs[@]}" | sort -n | awk -v per="$per" '{a[NR]=$1} END {print a[int((NR+1)/2)] * per}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}'; }

table() {  # $1: label of the table state
  printf '\n%s\n' "jobs per second, $1 (median of $REPEATS; pgbench -t, clients run as a member of ai_service)"
  printf '%-8s %10s %10s %10s %7s %12s %12s %7s %8s\n' clients ceiling bare_sql claim_job ratio bare_batch claim_jobs ratio x_single
  for clients in 1 2 4 8; do
    ceiling=$(run ceiling.sql "$clients" "$SINGLE" 1)
    bare=$(run baseline_single.sql "$clients" "$SINGLE" 1)
    single=$(run claim_complete.sql "$clients" "$SINGLE" 1)
    bare_batch=$(run baseline_batch.sql "$clients" "$BATCHES" 100)
    batch=$(run claim_complete_batch.sql "$clients" "$BATCHES" 100)
    printf '%-8s %10.0f %10.0f %10.0f %7s %12.0f %12.0f %7s %8s\n' "$clients" "$ceiling" "$bare" "$single" \
      "$(ratio "$single" "$bare")" "$bare_batch" "$batch" "$(ratio "$batch" "$bare_batch")" "$(ratio "$batch" "$single")"
  done
}

table "empty table"
psql -X -q -v ON_ERROR_STOP=1 -v n="$FINISHED" -d "$bench_url" -f "$HERE/queue/finished.sql" >/dev/null
table "with $FINISHED finished jobs in the same table and queue"
echo "(ceiling: single-row UPDATE; bare_sql/bare_batch: the plain SQL of the design on a plain table;"
echo " ratio: ours / bare at the same client count; x_single: claim_jobs(100) / claim_job)"

printf '\n%s\n' "Python workers, no-op handler, $PYJOBS jobs, jobs per second (median of $REPEATS)"
printf '%-10s %12s %12s %7s\n' processes Worker pgqueuer ratio
for processes in 1 2 4; do
  ours=() theirs=()
  for _ in $(seq "$REPEATS"); do
    ours+=("$("$PY" "$HERE/queue/python_workers.py" "$bench_url" "$worker_url" "$processes" "$PYJOBS" agent_state | awk '{print $3}')")
    theirs+=("$("$PY" "$HERE/queue/python_workers.py" "$bench_url" "$worker_url" "$processes" "$PYJOBS" pgqueuer | awk '{print $3}')")
  done
  a=$(printf '%s\n' "${ours[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  b=$(printf '%s\n' "${theirs[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  printf '%-10s %12.0f %12.0f %7s\n' "$processes" "$a" "$b" "$(ratio "$a" "$b")"
done
echo "(Worker: concurrency 1, prefetch 9 (claims 10 per round trip), completions batched; pgqueuer: batch_size 10,"
echo " drain mode, psycopg driver; both in separate processes, timed from the first job started to the last finished)"
