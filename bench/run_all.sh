#!/usr/bin/env bash
# `make bench`: every bench/*.sh in turn, against $DATABASE_URL (the private cluster by default).
set -euo pipefail
cd "$(dirname "$0")"
for script in ./*.sh; do
  [ "$script" = ./run_all.sh ] && continue
  echo "=== $script"
  "$script"
done
