#!/usr/bin/env bash
# `make bench`: every bench/*.sh in turn, against $DATABASE_URL (the private cluster by default).
set -euo pipefail
cd "$(dirname "$0")"
for script in ./*.sh; do
  [ "$script" = ./run_all.sh ] && continue
  [ "$script" = ./capacity_ab.sh ] && continue  # a tool: capacity.sh from the trees one names (docs/benchmarks.md)
  if [ "$script" = ./schema_ab.sh ] && [ -z "${BASE_REV:-}" ]; then
    echo "=== $script skipped: set BASE_REV to compare this tree with a revision"; continue
  fi
  echo "=== $script"
  "$script"
done
