#!/usr/bin/env bash
# One tenant's reads beside another tenant's rows (issue 21, defect 3): each list function called
# by tenant A (5 sessions and a few rows each), first with tenant B empty, then with tenant B
# holding BENCH_TENANT_ROWS rows (default 1,000,000 jobs and as many checkpoints, a tenth as many
# sessions, eval runs and pending approvals). Prints µs per call (pgbench, one client, medians of
# BENCH_REPEATS runs of BENCH_SECONDS) and the ratio: a read bounded by the tenant's own rows stays
# near 1.0 whatever B holds. Works in a database of its own on the server of $DATABASE_URL.
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
us_per_call() {  # sql -> median µs per call, tenant A, one client
  local f runs=() tps
  f=$(mktemp)
  printf '%s;\n' "$1" > "$f"
  for _ in $(seq "$REPEATS"); do
    tps=$(pgbench -n -f "$f" -c 1 -T "$SECONDS_CALL" "$a_url" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\) .*/\1/p')
    runs+=("$(awk -v t="$tps" 'BEGIN {printf "%.0f", 1e6 / t}')")
  done
  rm -f "$f"
  printf '%s\n' "${runs[@]}" | median
}
declare -A before
for entry in "${CALLS[@]}"; do before[${entry%%|*}]=$(us_per_call "${entry#*|}"); done
psql -X -q -v ON_ERROR_STOP=1 -v n="$ROWS" -d "$bench_url" -f "$HERE/tenant_reads/load.sql" >/dev/null
echo "tenant A's reads (5 sessions) with tenant B empty, then holding $ROWS jobs and $ROWS checkpoints (µs per call, median of $REPEATS x ${SECONDS_CALL}s, 1 client):"
printf '  %-34s %10s %10s %7s\n' call "B empty" "B full" ratio
for entry in "${CALLS[@]}"; do
  name=${entry%%|*}
  after=$(us_per_call "${entry#*|}")
  printf '  %-34s %10s %10s %7s\n' "$name" "${before[$name]}" "$after" "$(awk -v a="${before[$name]}" -v b="$after" 'BEGIN {printf "%.2f", b / a}')"
done
