#!/usr/bin/env bash
# One tenant's reads beside another tenant's rows (issue 21, defect 3): each list function called
# by tenant A (5 sessions and a few rows each) in two databases of the same server, one where
# tenant B holds nothing (a copy made before B's rows are loaded) and one where tenant B holds
# BENCH_TENANT_ROWS rows (default 1,000,000 jobs and as many checkpoints, a tenth as many
# sessions, eval runs and pending approvals). The two are measured in turn, call by call and run
# by run (pgbench, one client, BENCH_SECONDS each), so a load that comes and goes on the machine
# falls on both; prints the medians of BENCH_REPEATS runs in µs per call and their ratio: a read
# bounded by the tenant's own rows stays near 1.0 whatever B holds. Works in databases of its own
# on the server of $DATABASE_URL.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
REPEATS=${BENCH_REPEATS:-3}
SECONDS_CALL=${BENCH_SECONDS:-3}
ROWS=${BENCH_TENANT_ROWS:-1000000}
. "$HERE/common.bash"
bench_init agent_state_bench_tenant_reads
[ "$bench_super" = 1 ] || { echo "tenant reads bench: skipped: it needs a superuser DATABASE_URL (a bulk load)"; exit 0; }
bench_database
bench_deploy
psql -X -q -v ON_ERROR_STOP=1 -d "$bench_url" >/dev/null <<'SQL'
do $$
begin
  if not exists (select from pg_roles where rolname = 'bench_tenant_a') then create role bench_tenant_a login; end if;
  if not exists (select from pg_roles where rolname = 'bench_tenant_b') then create role bench_tenant_b login; end if;
  if not exists (select from pg_roles where rolname = 'bench_worker') then create role bench_worker login; end if;
end $$;
grant ai_user to bench_tenant_a, bench_tenant_b;
grant ai_service to bench_worker;
SQL
a_url=$(url_with "$bench_url" user=bench_tenant_a)
psql -X -q -v ON_ERROR_STOP=1 -d "$a_url" -f "$HERE/tenant_reads/tenant_a.sql" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d "$(url_with "$bench_url" user=bench_worker)" -f "$HERE/tenant_reads/tenant_a_approval.sql" >/dev/null
psql -X -q -d "$bench_url" -c "vacuum analyze" >/dev/null
# the database where B holds nothing: a copy of this one before B's rows come
empty_name=${bench_name}_empty
psql -X -q -v ON_ERROR_STOP=1 -d "$admin_url" -c "drop database if exists $empty_name with (force)" \
  -c "create database $empty_name template $bench_name owner \"$deploy_user\"" >/dev/null
trap 'psql -X -q -d "$admin_url" -c "drop database if exists $empty_name with (force)" -c "drop database if exists $bench_name with (force)" >/dev/null 2>&1 || true' EXIT
empty_url=$(url_with "${bench_url/\/$bench_name/\/$empty_name}" user=bench_tenant_a)

CALLS=(
  "list_sessions|select * from ai.list_sessions()"
  "list_jobs|select * from ai.list_jobs()"
  "queue_stats|select * from ai.queue_stats()"
  "list_checkpoints (every thread)|select * from ai.list_checkpoints(null)"
  "pending_approvals|select * from ai.pending_approvals()"
  "get_eval_runs|select * from ai.get_eval_runs()"
  "prune_idle_threads (a batch)|select * from ai.prune_idle_threads('30 days')"
  "usage_summary|select * from ai.usage_summary(now() - interval '1 day', now())"
)
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
us_per_call() {  # url sql -> µs per call of one pgbench run, one client
  local f tps
  f=$(mktemp)
  printf '%s;\n' "$2" > "$f"
  tps=$(pgbench -n -f "$f" -c 1 -T "$SECONDS_CALL" "$1" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\) .*/\1/p')
  rm -f "$f"
  awk -v t="$tps" 'BEGIN {printf "%.0f", 1e6 / t}'
}
psql -X -q -v ON_ERROR_STOP=1 -v n="$ROWS" -d "$bench_url" -f "$HERE/tenant_reads/load.sql" >/dev/null
echo "tenant A's reads (5 sessions) beside tenant B holding nothing, and holding $ROWS jobs and $ROWS checkpoints (µs per call, median of $REPEATS x ${SECONDS_CALL}s each, in turn, 1 client):"
printf '  %-34s %10s %10s %7s\n' call "B empty" "B full" ratio
for entry in "${CALLS[@]}"; do
  name=${entry%%|*}
  empty=(); full=()
  for _ in $(seq "$REPEATS"); do
    empty+=("$(us_per_call "$empty_url" "${entry#*|}")")
    full+=("$(us_per_call "$a_url" "${entry#*|}")")
  done
  e=$(printf '%s\n' "${empty[@]}" | median)
  f=$(printf '%s\n' "${full[@]}" | median)
  printf '  %-34s %10s %10s %7s\n' "$name" "$e" "$f" "$(awk -v a="$e" -v b="$f" 'BEGIN {printf "%.2f", b / a}')"
done
