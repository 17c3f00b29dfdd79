#!/usr/bin/env bash
# Checkpoint reads that depend on their own thread only (issue 34 item 3, issue 41 item 6): a
# thread's get_tuple at 200, 1,000 and 3,000 steps beside LangGraph's PostgresSaver, and steps/s
# of graph_worker and of AgentStateSaver in the caller's process with 10 k, 100 k and 1 M
# checkpoints of another tenant stored (bench/checkpoint_reads/bench_reads.py). Run by
# `make bench`, or alone: `bench/checkpoint_reads.sh` (DATABASE_URL from `eval "$(make -s env)"`).
# Works in a database of its own (bench/common.bash). Sizes: BENCH_READ_STEPS, BENCH_READ_CROWDS,
# BENCH_READ_RUNS, BENCH_REPEATS.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
. "$HERE/common.bash"
bench_init agent_state_bench_checkpoint_reads
bench_database
bench_deploy
DATABASE_URL=$bench_url "${PYTHON:-$ROOT/.venv/bin/python}" "$HERE/checkpoint_reads/bench_reads.py" "$@"
