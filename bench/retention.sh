#!/usr/bin/env bash
# Retention: ai.archive_sessions rows/s alone and with the queue under load, and the queue's
# throughput (ai.claim_job + ai.complete_job, pgbench, 2 clients) alone and while the archiver
# runs. Medians of BENCH_REPEATS runs, ratios. Works in a database of its own on the server of
# $DATABASE_URL (created and dropped here). Run by `make bench`.
# The live queue holds BENCH_RETENTION_QUEUE due jobs (default 20,000); archiving a session
# cascades to ai.agent_jobs, whose jobs of a thread agent_jobs_thread finds (archive_thread_indexes).
# Then: archive + restore per session against the jobs tables' size (10 k to 1 M jobs), with and
# without that index, and what the index costs a claim + complete, paired.
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

# Archive and restore per session against the size of the jobs tables (issue 21, defect 4): flat
# when the cascade and restore_session find a thread's jobs by agent_jobs_thread (the
# archive_thread_indexes change), growing with the table without it (the same run with the two
# indexes dropped). BENCH_RETENTION_JOB_SIZES: the jobs in ai.agent_jobs and in
# ai_archive.agent_jobs (default 10,000, 100,000 and 1,000,000); BENCH_RETENTION_SCALE_SESSIONS
# sessions archived and restored at each size (default 100; 20 without the index).
sizes=${BENCH_RETENTION_JOB_SIZES:-10000 100000 1000000}
k=${BENCH_RETENTION_SCALE_SESSIONS:-100}
scale_run() {  # size sessions -> "archive_ms restore_ms left"
  psql -X -q -v ON_ERROR_STOP=1 -v n="$1" -v k="$2" -d "$bench_url" -f "$HERE/retention/scale.sql" >/dev/null
  psql -X -q -At -v ON_ERROR_STOP=1 -v k="$2" -d "$worker_url" -f "$HERE/retention/scale_timed.sql"
}
printf '\n%s\n' "archive + restore per session against the jobs tables' size ($k sessions of 2 jobs; ms per session)"
printf '%-12s %14s %14s %20s %20s\n' "jobs" "archive" "restore" "archive, no index" "restore, no index"
for n in $sizes; do
  read -r a r _ <<<"$(scale_run "$n" "$k")"
  psql -X -q -d "$bench_url" -c "drop index ai.agent_jobs_thread" -c "drop index ai_archive.agent_jobs_thread" >/dev/null
  read -r a0 r0 _ <<<"$(scale_run "$n" $(( k < 20 ? k : 20 )))"
  psql -X -q -d "$bench_url" -c "create index agent_jobs_thread on ai.agent_jobs (thread_id)" \
    -c "create index agent_jobs_thread on ai_archive.agent_jobs (thread_id)" >/dev/null
  printf '%-12s %14s %14s %20s %20s\n' "$n" "$a" "$r" "$a0" "$r0"
done
psql -X -q -d "$bench_url" -c "delete from ai.agent_jobs where queue in ('scale-filler', 'scale')" \
  -c "delete from ai_archive.agent_sessions where thread_id like 'scale-%'" >/dev/null

# What agent_jobs_thread costs the hot path: claim + complete (pgbench, 2 clients) with and without
# it, alternated BENCH_REPEATS times on the same table (the ABAB pairing of bench/schema_ab.sh).
with_i=(); without_i=()
psql -X -q -v ON_ERROR_STOP=1 -v n="${BENCH_RETENTION_QUEUE:-20000}" -d "$bench_url" -f "$HERE/queue/fill.sql" >/dev/null
for _ in $(seq "$REPEATS"); do
  with_i+=("$(queue_tps)")
  psql -X -q -d "$bench_url" -c "drop index ai.agent_jobs_thread" >/dev/null
  without_i+=("$(queue_tps)")
  psql -X -q -d "$bench_url" -c "create index agent_jobs_thread on ai.agent_jobs (thread_id)" >/dev/null
  psql -X -q -v ON_ERROR_STOP=1 -v n="${BENCH_RETENTION_QUEUE:-20000}" -d "$bench_url" -f "$HERE/queue/fill.sql" >/dev/null
done
w=$(printf '%s\n' "${with_i[@]}" | median); wo=$(printf '%s\n' "${without_i[@]}" | median)
printf '\n%s\n' "claim + complete with agent_jobs_thread (median of $REPEATS pairs, $CLIENTS pgbench clients)"
printf '%-52s %12s %8s\n' "" "per second" ratio
printf '%-52s %12.0f %8s\n' "without agent_jobs_thread (baseline)" "$wo" 1.00
printf '%-52s %12.0f %8s\n' "with agent_jobs_thread" "$w" "$(ratio "$w" "$wo")"
