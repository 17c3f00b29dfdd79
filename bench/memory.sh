#!/usr/bin/env bash
# Long-term memory: LangGraph's PostgresStore against AgentStateStore (as a tenant, RLS on) for put,
# get, search with a filter and search with a text query, on the same server, with
# BENCH_MEMORY_ITEMS items (default 10,000) spread over BENCH_MEMORY_TENANTS tenants (default 4;
# PostgresStore has no tenants: a namespace label per tenant instead). Prints calls per second, ms
# per call and the ratios. Run by `make bench`, in a database of its own (bench/common.bash).
# BENCH_SECONDS (per point, default 3) sizes the run.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
. "$HERE/common.bash"
bench_init agent_state_bench_memory
bench_database
bench_deploy
DATABASE_URL=$bench_url "${PYTHON:-$ROOT/.venv/bin/python}" "$HERE/memory/bench_memory.py" "$@"
