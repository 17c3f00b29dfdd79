#!/usr/bin/env bash
# Queue: claim + complete through ai.claim_job/ai.complete_job and in batches of 100
# (ai.claim_jobs/ai.complete_jobs), side by side with the same loop as the bare SQL of the design
# (on a plain table, and on ai.agent_jobs itself as its owner: same writes, no checks, no RLS)
# and with pgbench's single-row UPDATE (the ceiling), at 1, 2, 4 and 8 clients, without and with
# 1M finished jobs in the table (and, on the empty table, single claims with prepared statements);
# then the Python Worker against pgqueuer at 1, 2 and 4 worker
# processes, and the backend CPU per job (steadier than throughput on a shared machine). Medians
# of BENCH_REPEATS runs; ratios against the bare SQL. Run by `make bench`.
# Works in a database of its own on the server of $DATABASE_URL (bench/common.bash). Sizes:
# BENCH_QUEUE_SINGLE, _BATCHES, _FINISHED, _PYJOBS, _PROCESSES ("1 2 4"), _CLIENTS ("1 2 4 8"),
# BENCH_REPEATS, BENCH_CPU_REPEATS.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
REPEATS=${BENCH_REPEATS:-3}
SINGLE=${BENCH_QUEUE_SINGLE:-1000}    # claim+complete loops per client
BATCHES=${BENCH_QUEUE_BATCHES:-20}    # batches of 100 per client
FINISHED=${BENCH_QUEUE_FINISHED:-1000000}
PYJOBS=${BENCH_QUEUE_PYJOBS:-10000}
PY=${PYTHON:-$ROOT/.venv/bin/python}
# BENCH_QUEUE_QUICK=1: only the empty-table table (a few minutes), for work on the queue itself
# The schema owner deploys (a role RLS applies to, docs/security.md); the fixtures run as the role
# of $DATABASE_URL (bench/common.bash).
. "$HERE/common.bash"
bench_init agent_state_bench_queue
worker_url=$(url_with "$bench_url" user=bench_worker)
BENCH_KEEP=${BENCH_QUEUE_KEEP:-${BENCH_KEEP:-}} bench_database
bench_deploy
psql -X -q -v ON_ERROR_STOP=1 -d "$bench_url" -f "$HERE/queue/setup.sql" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d "$worker_url" -f "$HERE/queue/sessions.sql" >/dev/null
[ -n "${BENCH_QUEUE_SETUP_ONLY:-}" ] && exit 0

once() {  # script clients loops per url -> jobs/s of one run on freshly filled queues
  local script=$1 clients=$2 loops=$3 per=$4 as=$5
  psql -X -q -v ON_ERROR_STOP=1 -v n=$((clients * loops * per)) -d "$bench_url" -f "$HERE/queue/fill.sql" >/dev/null
  pgbench -n -M "${PGBENCH_MODE:-simple}" -f "$HERE/queue/$script" -c "$clients" -j "$clients" -t "$loops" "$as" 2>/dev/null \
    | sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' | awk -v per="$per" '{print $1 * per}'
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : 0)}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}'; }

# The points of one client count, interleaved: each repeat runs every script once, so load from
# elsewhere on the machine falls on all of them alike; medians per script.
POINTS="ceiling.sql:1:s baseline_single.sql:1:w same_table_single.sql:1:o claim_complete.sql:1:w
baseline_batch.sql:100:w same_table_batch.sql:100:o claim_complete_batch.sql:100:w"
# same_*: the bare SQL on ai.agent_jobs as a role RLS does not bind: a superuser URL only
[ "$bench_super" = 1 ] || { POINTS=$(tr ' ' '\n' <<<"$POINTS" | grep -v '^same_' | tr '\n' ' ');
  echo "queue bench: DATABASE_URL is no superuser: the 'same' columns (ai.agent_jobs bypassing RLS) are left out (0)" >&2; }
table() {  # $1: label of the table state
  printf '\n%s\n' "jobs per second, $1 (median of $REPEATS, interleaved; pgbench -t; functions run as a member of ai_service)"
  printf '%-7s %8s | %8s %8s %9s %6s %6s | %9s %9s %10s %6s %6s %7s\n' clients ceiling \
    bare same claim_job /bare /same bare_100 same_100 claim_jobs /bare /same /single
  for clients in ${BENCH_QUEUE_CLIENTS:-1 2 4 8}; do
    declare -A got=()
    for _ in $(seq "$REPEATS"); do
      for point in $POINTS; do
        IFS=: read -r script per who <<<"$point"
        loops=$SINGLE; [ "$per" = 100 ] && loops=$BATCHES
        as=$worker_url; [ "$who" = o ] && as=$bench_url
        got[$script]+="$(once "$script" "$clients" "$loops" "$per" "$as") "
      done
    done
    m() { { tr ' ' '\n' <<<"${got[$1]:-}" | grep . || true; } | median; }
    ceiling=$(m ceiling.sql) bare=$(m baseline_single.sql) same=$(m same_table_single.sql) single=$(m claim_complete.sql)
    bare_batch=$(m baseline_batch.sql) same_batch=$(m same_table_batch.sql) batch=$(m claim_complete_batch.sql)
    printf '%-7s %8.0f | %8.0f %8.0f %9.0f %6s %6s | %9.0f %9.0f %10.0f %6s %6s %7s\n' "$clients" "$ceiling" \
      "$bare" "$same" "$single" "$(ratio "$single" "$bare")" "$(ratio "$single" "$same")" \
      "$bare_batch" "$same_batch" "$batch" "$(ratio "$batch" "$bare_batch")" "$(ratio "$batch" "$same_batch")" \
      "$(ratio "$batch" "$single")"
    unset got
  done
}

# The same single claims with prepared statements (pgbench -M prepared; what psycopg does after
# five executions): the bare SQL is then no longer planned per call, as the functions' statements
# never are. Adds the bare SQL on a table with only what the issue requires (its indexes and RLS).
prepared_table() {
  printf '\n%s\n' "jobs per second, empty table, prepared statements (median of $REPEATS, interleaved; pgbench -M prepared -t)"
  printf '%-7s %8s %9s %8s %9s %6s %9s %6s\n' clients bare required same claim_job /bare /required /same
  for clients in ${BENCH_QUEUE_CLIENTS:-1 2 4 8}; do
    declare -A got=()
    for _ in $(seq "$REPEATS"); do
      for point in baseline_single.sql:w required_table_single.sql:w same_table_single.sql:o claim_complete.sql:w; do
        [ "$bench_super" = 1 ] || [ "${point#same_}" = "$point" ] || continue
        IFS=: read -r script who <<<"$point"
        as=$worker_url; [ "$who" = o ] && as=$bench_url
        got[$script]+="$(PGBENCH_MODE=prepared once "$script" "$clients" "$SINGLE" 1 "$as") "
      done
    done
    m() { { tr ' ' '\n' <<<"${got[$1]:-}" | grep . || true; } | median; }
    bare=$(m baseline_single.sql) required=$(m required_table_single.sql) same=$(m same_table_single.sql)
    single=$(m claim_complete.sql)
    printf '%-7s %8.0f %9.0f %8.0f %9.0f %6s %9s %6s\n' "$clients" "$bare" "$required" "$same" "$single" \
      "$(ratio "$single" "$bare")" "$(ratio "$single" "$required")" "$(ratio "$single" "$same")"
    unset got
  done
  echo "(required: the bare SQL on bench_queue.required_jobs, ai.agent_jobs' columns, indexes and RLS policy"
  echo " without its row CHECK and foreign key, as the worker. same: as above (ai.agent_jobs as its owner:"
  echo " CHECK, foreign key and triggers, no RLS). /required, /same: claim_job's jobs/s over those)"
}

table "empty table"
prepared_table
[ -n "${BENCH_QUEUE_QUICK:-}" ] && exit 0  # the empty-table figures only (while working on the queue)
psql -X -q -v ON_ERROR_STOP=1 -v n="$FINISHED" -d "$bench_url" -f "$HERE/queue/finished.sql" >/dev/null
table "with $FINISHED finished jobs in the same table and queue"
echo "(ceiling: pgbench's single-row UPDATE. bare: the plain SQL of the design on a plain table with one"
echo " partial index. same: that SQL on ai.agent_jobs as its owner (the same index writes; no token, no"
echo " one-thread check, no RLS). claim_job / claim_jobs: the functions, then complete_job / complete_jobs."
echo " /bare, /same: the functions' jobs/s over those; /single: claim_jobs(100) over claim_job)"

CPU_REPEATS=${BENCH_CPU_REPEATS:-9}
printf '\n%s\n' "backend CPU per job, 1 client, asynchronous commit ($CPU_REPEATS runs each, interleaved; us; ratio: bare / ours)"
printf '%-32s %8s %8s %7s | %8s %8s %7s\n' "" "bare" "ours" "ratio" "bare min" "ours min" "ratio"
"$PY" "$HERE/queue/cpu_per_job.py" "$bench_url" "$worker_url" "$HERE/queue/fill.sql" "$CPU_REPEATS"

# pgqueuer comes with the bench extra (make bench installs it): without it, the Worker alone
systems="agent_state pgqueuer"
"$PY" -c 'import pgqueuer' 2>/dev/null || { systems=agent_state;
  echo "queue bench: pgqueuer is not installed (pip install -e 'python[bench]'): the Worker alone" >&2; }
printf '\n%s\n' "Python workers, no-op handler, $PYJOBS jobs, jobs per second (median of $REPEATS)"
printf '%-10s %12s %12s %7s\n' processes Worker pgqueuer ratio
for processes in ${BENCH_QUEUE_PROCESSES:-1 2 4}; do
  ours=() theirs=()
  for _ in $(seq "$REPEATS"); do  # interleaved, as above
    ours+=("$("$PY" "$HERE/queue/python_workers.py" "$bench_url" "$worker_url" "$processes" "$PYJOBS" agent_state | awk '{print $3}')")
    [ "$systems" = agent_state ] && { theirs+=(0); continue; }
    theirs+=("$("$PY" "$HERE/queue/python_workers.py" "$bench_url" "$worker_url" "$processes" "$PYJOBS" pgqueuer | awk '{print $3}')")
  done
  a=$(printf '%s\n' "${ours[@]}" | median)
  b=$(printf '%s\n' "${theirs[@]}" | median)
  printf '%-10s %12.0f %12.0f %7s\n' "$processes" "$a" "$b" "$(ratio "$a" "$b")"
done
echo "(Worker: concurrency 1, prefetch 9 (claims 10 per round trip), completions batched; pgqueuer: batch_size 10,"
echo " drain mode, psycopg driver; both in separate processes, timed from the first job started to the last finished)"
