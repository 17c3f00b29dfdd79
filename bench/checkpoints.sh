#!/usr/bin/env bash
# Checkpoints: LangGraph's PostgresSaver against AgentStateSaver for put, put_writes, get_tuple and
# list(50) at 1 and 8 threads, checkpoint_lineage over a 10,000-deep chain against one index range
# scan, and bytes per checkpoint; prints figures and ratios. Run by `make bench`.
# BENCH_SECONDS (per point, default 3) and BENCH_REPEATS (median of, default 3) size the run.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DATABASE_URL:?DATABASE_URL is set by make bench}"
exec "${PYTHON:-.venv/bin/python}" bench/checkpoints/bench_checkpoints.py "$@"
