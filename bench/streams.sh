#!/usr/bin/env bash
# Streaming: the batching writer against one message write plus a round trip per batch, and a
# reader's latency in another process (bench/streams.py). `make bench` runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${VPY:-.venv/bin/python}" bench/streams.py
