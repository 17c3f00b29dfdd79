#!/usr/bin/env bash
# Citus (issue 40, docs/scaling.md): the capacity workload (bench/capacity) on one node and on a Citus
# formation in one run, and what each node of each did: CPU, WAL, transactions, two-phase commits,
# rows and statements per node step, the coordinator's load per run (bench/citus/citus_bench.py).
# First each call of a durable run once on each, and what worked.
# The one node: a database of its own on DATABASE_URL's server (bench/common.bash). The formation:
# the one `make citus-deploy` makes (scripts/citus.sh, CITUS_PORT), deployed and distributed; when
# none answers there and Citus is installed, this script makes it (BENCH_CITUS_MAKE=0: never);
# without Citus it says so and skips. Statements per node are counted where pg_stat_statements is
# loaded: BENCH_CITUS_STATEMENTS=1 loads it on the formation's nodes (ALTER SYSTEM, a restart).
# BENCH_CITUS_TARGETS=formation: the formation alone (no DATABASE_URL needed; tests/citus/test_bench.py).
# Sizes: BENCH_CITUS_LEVEL (20 concurrent runs), _NODES (24 nodes per run), _WARMUP (10 s), _WINDOW
# (20 s), _MODES (runs,writes), _TARGETS (one,formation). BENCH_CITUS_OUT: the JSON (bench/citus/results.json).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
PY=${PYTHON:-$ROOT/.venv/bin/python}
CITUS_PORT=${CITUS_PORT:-6200}
CITUS_WORKERS=${CITUS_WORKERS:-2}
export CITUS_PORT CITUS_WORKERS
citus_su() {  # citus_su PORT: psql as the superuser on a node's agent_state
  psql -X -q -v ON_ERROR_STOP=1 "postgresql://postgres@127.0.0.1:$1/agent_state?connect_timeout=5" "${@:2}"
}
formation_ready() {
  citus_su "$CITUS_PORT" -At -c "select 1 from pg_dist_partition where logicalrelid = 'ai.agent_sessions'::regclass" 2>/dev/null | grep -q 1
}
if ! formation_ready; then
  if [ "${BENCH_CITUS_MAKE:-1}" != 0 ] && [ -f "$(pg_config --pkglibdir 2>/dev/null)/citus.so" ]; then
    echo "citus bench: no formation on 127.0.0.1:$CITUS_PORT: making one (scripts/citus.sh start, deploy)"
    "$ROOT/scripts/citus.sh" start >/dev/null && "$ROOT/scripts/citus.sh" deploy >/dev/null || true
  fi
  if ! formation_ready; then
    echo "citus bench skipped: no distributed formation on 127.0.0.1:$CITUS_PORT (make citus-deploy makes one; Citus: docs/scaling.md)"
    exit 0
  fi
fi

targets=${BENCH_CITUS_TARGETS:-one,formation}
ONE_ADMIN="" ONE_TENANT="" ONE_WORKER=""
if [[ ",$targets," == *,one,* ]]; then
  . "$HERE/common.bash"
  bench_init agent_state_bench_citus
  bench_database
  bench_deploy
  psql -X -q -v ON_ERROR_STOP=1 -d "$bench_url" -f "$HERE/capacity/setup.sql" >/dev/null
  psql -X -q -d "$bench_url" -c "create extension if not exists pg_walinspect" >/dev/null 2>&1 \
    || echo "citus bench: no pg_walinspect on the one node (a superuser installs it): no commit or 2PC counts there" >&2
  psql -X -q -d "$bench_url" -c "create extension if not exists pg_stat_statements" >/dev/null 2>&1 || true
  ONE_ADMIN=$bench_url ONE_TENANT=$(url_with "$bench_url" user=bench_cap_tenant) ONE_WORKER=$(url_with "$bench_url" user=bench_cap_worker)
fi

# The formation: pg_stat_statements loaded on request, the bench's roles (made on the coordinator,
# which propagates them), pg_walinspect and pg_stat_statements in the database of every node.
ports=$(seq "$CITUS_PORT" $((CITUS_PORT + CITUS_WORKERS)))
if [ "${BENCH_CITUS_STATEMENTS:-0}" = 1 ] \
   && ! citus_su "$CITUS_PORT" -At -c "show shared_preload_libraries" | grep -q pg_stat_statements; then
  for p in $ports; do citus_su "$p" -c "alter system set shared_preload_libraries = citus, pg_stat_statements"; done
  "$ROOT/scripts/citus.sh" stop && "$ROOT/scripts/citus.sh" start >/dev/null
fi
citus_su "$CITUS_PORT" >/dev/null <<'SQL'
set client_min_messages = warning;
select format('create role %I login', r) from unnest('{bench_cap_tenant,bench_cap_worker}'::text[]) r
 where not exists (select from pg_roles where rolname = r) \gexec
grant ai_user to bench_cap_tenant;
grant ai_service to bench_cap_worker;
SQL
for p in $ports; do
  citus_su "$p" -c "set client_min_messages = warning" -c "set citus.enable_ddl_propagation = off" \
    -c "create extension if not exists pg_walinspect" -c "create extension if not exists pg_stat_statements" >/dev/null
done

workers=""
for p in $(seq $((CITUS_PORT + 1)) $((CITUS_PORT + CITUS_WORKERS))); do
  workers="$workers${workers:+,}postgresql://postgres@127.0.0.1:$p/agent_state"
done
formation="postgresql://%s@127.0.0.1:$CITUS_PORT/agent_state"
ONE_ADMIN=$ONE_ADMIN ONE_TENANT=$ONE_TENANT ONE_WORKER=$ONE_WORKER BENCH_CITUS_TARGETS=$targets \
CITUS_ADMIN=$(printf "$formation" postgres) CITUS_TENANT=$(printf "$formation" bench_cap_tenant) \
CITUS_WORKER=$(printf "$formation" bench_cap_worker) CITUS_WORKER_ADMINS=$workers \
  "$PY" "$HERE/citus/citus_bench.py" "${BENCH_CITUS_OUT:-$HERE/citus/results.json}"
