#!/usr/bin/env bash
# Fair shares and limits per key (issue 38; docs/benchmarks.md, "Fair shares"): another tenant's
# claim latency with and without one tenant's 100,000-job backlog, and the claim's CPU at 1, 100
# and 10,000 keys against the claim of FAIR_BASE_REV (default: the last revision before keys),
# paired in one run (bench/fairness/fairness.py says how). Works in two databases of its own on
# the server of $DATABASE_URL (a superuser: the jobs are loaded directly).
#   BENCH_ROUNDS (3), BENCH_SECONDS (5), FAIR_BACKLOG (100000), FAIR_CLAIMS (2000), FAIR_BASE_REV
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
BASE_REV=${FAIR_BASE_REV:-4792266}
if ! git -C "$ROOT" cat-file -e "$BASE_REV^{commit}" 2>/dev/null; then
  echo "fairness bench: revision $BASE_REV is not in this clone (a shallow one?): HEAD's claim is the base"
  BASE_REV=HEAD
fi
PY=${VPY:-$ROOT/.venv/bin/python}
. "$HERE/common.bash"
bench_init agent_state_bench_fair
[ "$bench_super" = 1 ] || { echo "fairness bench: skipped: it needs a superuser DATABASE_URL (a bulk load)"; exit 0; }
bench_database
bench_deploy
base_name=${bench_name}_base
base_url=${bench_url/\/$bench_name/\/$base_name}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; psql -X -q -d "$admin_url" -c "drop database if exists $base_name with (force)" -c "drop database if exists $bench_name with (force)" >/dev/null 2>&1 || true' EXIT
psql -X -q -v ON_ERROR_STOP=1 -d "$admin_url" -c "drop database if exists $base_name with (force)" \
  -c "create database $base_name owner \"$deploy_user\"" >/dev/null
git -C "$ROOT" archive "$BASE_REV" | tar -x -C "$tmp"
(cd "$tmp" && PGUSER=$deploy_user PGDATABASE=$base_name sqitch --quiet deploy db:pg: >/dev/null 2>&1)
for u in "$bench_url" "$base_url"; do
  psql -X -q -v ON_ERROR_STOP=1 -d "$u" >/dev/null <<'SQL'
do $$
begin
  if not exists (select from pg_roles where rolname = 'bench_worker') then create role bench_worker login; end if;
  if not exists (select from pg_roles where rolname = 'bench_tenant_b') then create role bench_tenant_b login; end if;
end $$;
grant ai_service to bench_worker;
grant ai_user to bench_tenant_b;
SQL
  psql -X -q -v ON_ERROR_STOP=1 -d "$(url_with "$u" user=bench_worker)" -f "$HERE/queue/sessions.sql" >/dev/null
  psql -X -q -v ON_ERROR_STOP=1 -d "$(url_with "$u" user=bench_tenant_b)" \
    -c "select count(ai.create_session('fb-' || i)) from generate_series(0, 99) i" >/dev/null
done
echo "--- latency (head; base: one round with the backlog)"
"$PY" "$HERE/fairness/fairness.py" latency "$bench_url" "$base_url"
echo "--- claim CPU, base ($BASE_REV) against head"
"$PY" "$HERE/fairness/fairness.py" cpu "$base_url" "$bench_url"
