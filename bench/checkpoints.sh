#!/usr/bin/env bash
# Checkpoints: LangGraph's PostgresSaver against AgentStateSaver for put, put_writes, get_tuple and
# list(50) at 1 and 8 threads, checkpoint_lineage over a 10,000-deep chain against one index range
# scan, and bytes per checkpoint; prints figures and ratios. Run by `make bench`, in a database of
# its own (bench/common.bash). BENCH_SECONDS (per point, default 3), BENCH_REPEATS (median of, default
# 3), BENCH_CHAIN (the chain's depth) and BENCH_THREADS ("1 8") size the run.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
. "$HERE/common.bash"
bench_init agent_state_bench_checkpoints
bench_database
bench_deploy
DATABASE_URL=$bench_url "${PYTHON:-$ROOT/.venv/bin/python}" "$HERE/checkpoints/bench_checkpoints.py" "$@"
