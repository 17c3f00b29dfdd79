#!/usr/bin/env bash
# Checkpoint growth: bytes and put/get_tuple latency of 10-, 100-, 500- and 1,000-step message
# threads (English-like agent conversation), plain and with DeltaChannel, AgentStateSaver (LZ4 and
# pglz) against LangGraph's PostgresSaver in the same run. Run by `make bench`.
# BENCH_GROWTH_STEPS (default "10 100 500 1000") and BENCH_GROWTH_MODES ("plain delta") bound it.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DATABASE_URL:?DATABASE_URL is set by make bench}"
exec "${PYTHON:-.venv/bin/python}" bench/checkpoint_growth.py "$@"
