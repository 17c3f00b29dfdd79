#!/usr/bin/env bash
# Retention: ai.archive_sessions rows/s alone and with the queue under load, and the queue's
# throughput (ai.claim_job + ai.complete_job, pgbench, 2 clients) alone and while the archiver
# runs. Medians of BENCH_REPEATS runs, ratios. Works in a database of its own on the server of
# $DATABASE_URL (created and dropped here). Run by `make bench`.
# The live queue holds BENCH_RETENTION_QUEUE due jobs (default 20,000): archiving a session
# cascades to ai.agent_jobs, which has no index on thread_id by design (docs/queue.md), so
# archive throughput falls as the live queue grows.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
REPEATS=${BENCH_REPEATS:-3}
SESSIONS=${BENCH_RETENTION_SESSIONS:-1000}   # finished sessions per run, 53 rows each
SECONDS_QUEUE=${BENCH_SECONDS:-5}
CLIENTS=2
. "$HERE/common.bash"
bench_init agent_state_bench_retention
# the finished sessions are bulk-loaded with triggers off (session_replication_role): a superuser's
[ "$bench_super" = 1 ] || { echo "retention bench: skipped: it needs a superuser DATABASE_URL (a bulk load with triggers off)"; exit 0; }
worker_url=$(url_with "$bench_url" user=bench_worker)
bench_database
bench_deploy
psql -X -q -v ON_ERROR_STOP=1 -d "$bench_url" -f "$HERE/queue/setup.sql" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d "$worker_url" -f "$HERE/queue/sessions.sql" >/dev/null

fresh() {  # new finished sessions and a full queue
  psql -X -q -d "$bench_url" -c "delete from ai_archive.agent_sessions" -c "delete from ai.agent_sessions where thread_id like 'done-%'" >/dev/null
  psql -X -q -v ON_ERROR_STOP=1 -v n="$SESSIONS" -d "$bench_url" -f "$HERE/retention/sessions.sql" >/dev/null
  psql -X -q -v ON_ERROR_STOP=1 -v n="${BENCH_RETENTION_QUEUE:-20000}" -d "$bench_url" -f "$HERE/queue/fill.sql" >/dev/null
}
queue_tps() {
  pgbench -n -f "$HERE/queue/claim_complete.sql" -c "$CLIENTS" -j "$CLIENTS" -T "$SECONDS_QUEUE" "$worker_url" 2>/dev/null |
    sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p'
}
archive_rows_per_s() {  # runs the archiver to the end, prints rows moved per second
  local start end rows
  start=$(date +%s.%N)
  psql -X -q -v ON_ERROR_STOP=1 -d "$worker_url" -f "$HERE/retention/archive_loop.sql" >/dev/null
  end=$(date +%s.%N)
  rows=$(psql -X -At -d "$bench_url" -c "select (select count(*) from ai_archive.agent_sessions)
    + (select count(*) from ai_archive.session_messages) + (select count(*) from ai_archive.session_events)")
  awk -v r="$rows" -v a="$start" -v b="$end" 'BEGIN {printf "%.0f", r / (b - a)}'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

alone_q=(); during_q=(); alone_a=(); loaded_a=()
for _ in $(seq "$REPEATS"); do
  fresh
  alone_q+=("$(queue_tps)")
  alone_a+=("$(archive_rows_per_s)")
  fresh
  # The archiver runs while pgbench drives the queue; both measured over the same window.
  archive_rows_per_s > /tmp/agent_state_bench_archive.$$ &
  archiver=$!
  during_q+=("$(queue_tps)")
  wait "$archiver"
  loaded_a+=("$(cat /tmp/agent_state_bench_archive.$$)")
  rm -f /tmp/agent_state_bench_archive.$$
done
q0=$(printf '%s\n' "${alone_q[@]}" | median); q1=$(printf '%s\n' "${during_q[@]}" | median)
a0=$(printf '%s\n' "${alone_a[@]}" | median); a1=$(printf '%s\n' "${loaded_a[@]}" | median)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}'; }
printf '\n%s\n' "retention (median of $REPEATS; $SESSIONS finished sessions of 53 rows each per run; queue: $CLIENTS pgbench clients as ai_service)"
printf '%-52s %12s %8s\n' "" "per second" ratio
printf '%-52s %12.0f %8s\n' "queue claim+complete, alone (baseline)" "$q0" 1.00
printf '%-52s %12.0f %8s\n' "queue claim+complete, while archive_sessions runs" "$q1" "$(ratio "$q1" "$q0")"
printf '%-52s %12.0f %8s\n' "archive_sessions rows moved, alone (baseline)" "$a0" 1.00
printf '%-52s %12.0f %8s\n' "archive_sessions rows moved, with the queue under load" "$a1" "$(ratio "$a1" "$a0")"
