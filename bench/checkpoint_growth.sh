#!/usr/bin/env bash
# Checkpoint growth: bytes and put/get_tuple latency of 10-, 100-, 500- and 1,000-step message
# threads (English-like agent conversation), plain and with DeltaChannel, AgentStateSaver (LZ4 and
# pglz) against LangGraph's PostgresSaver in the same run. Run by `make bench`, in a database of
# its own (bench/common.bash). BENCH_GROWTH_STEPS (default "10 100 500 1000"), BENCH_GROWTH_MODES
# ("plain delta") and BENCH_GROWTH_COMPRESSIONS ("lz4 pglz zlib") bound it.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
. "$HERE/common.bash"
bench_init agent_state_growth_bench
bench_database
bench_deploy
DATABASE_URL=$bench_url "${PYTHON:-$ROOT/.venv/bin/python}" "$HERE/checkpoint_growth.py" "$@"
