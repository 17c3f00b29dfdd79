#!/usr/bin/env bash
# The TypeScript saver: AgentStateSaver (typescript/, as an ai_user tenant: RLS paid) against
# LangGraph.js's PostgresSaver (@langchain/langgraph-checkpoint-postgres, its tables in schema
# bench_langgraph_js, as the URL's role) for put and getTuple, over one connection and 8
# concurrent ones, on the same server; prints figures and ratios. Run by `make bench` (which runs
# `npm ci` and builds typescript/dist first), in a database of its own (bench/common.bash).
# BENCH_SECONDS (per point, default 3) and BENCH_REPEATS (median of, default 3) size the run.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
. "$HERE/common.bash"
bench_init agent_state_bench_typescript
bench_database
bench_deploy
psql -X -q -v ON_ERROR_STOP=1 -d "$bench_url" >/dev/null <<'SQL'
do $$ begin
  if not exists (select from pg_roles where rolname = 'bench_ts_tenant') then create role bench_ts_tenant login; end if;
end $$;
grant ai_user to bench_ts_tenant;
SQL
cd "$ROOT/typescript"
BENCH_URL=$bench_url TENANT=bench_ts_tenant node "$ROOT/typescript/bench/bench_savers.mjs" "$@"
