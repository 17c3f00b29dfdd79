#!/usr/bin/env bash
# ai.context_window on a 100,000-message thread against a 100-message thread (both compacted to
# a 50-message tail), pgbench at 1 and 4 clients, medians of repeats, ratio. Run by `make bench`,
# in a database of its own (bench/common.bash); BENCH_COMPACTION_MESSAGES sizes the long thread.
set -euo pipefail
cd "$(dirname "$0")/compaction"
DURATION=${BENCH_SECONDS:-5}
REPEATS=${BENCH_REPEATS:-3}
LONG=${BENCH_COMPACTION_MESSAGES:-100000}  # the long thread's messages
ROOT=$(cd ../.. && pwd)
. ../common.bash
bench_init agent_state_bench_compaction
bench_database
bench_deploy
psql -X -q -v ON_ERROR_STOP=1 -d "$bench_url" -f ../sessions/setup.sql >/dev/null
tenant_url=$(url_with "$bench_url" user=bench_tenant)
psql -X -q -v ON_ERROR_STOP=1 -v long="$LONG" -d "$tenant_url" -f setup.sql >/dev/null

tps() {  # thread clients -> median tps
  local runs=()
  for _ in $(seq "$REPEATS"); do
    runs+=("$(pgbench -n -f window.sql -c "$2" -j "$2" -T "$DURATION" -D thread="$1" "$tenant_url" 2>/dev/null |
      sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p')")
  done
  printf '%s\n' "${runs[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

printf '%-52s %8s %10s %10s\n' "context_window calls per second (median of $REPEATS x ${DURATION}s)" clients calls/s "time ratio"
for clients in 1 4; do
  small=$(tps window-100 "$clients")
  large=$(tps "window-$LONG" "$clients")
  printf '%-52s %8s %10.0f %9.2fx\n' "100-message thread (baseline)" "$clients" "$small" 1
  printf '%-52s %8s %10.0f %9.2fx\n' "$LONG-message thread" "$clients" "$large" \
    "$(awk -v a="$small" -v b="$large" 'BEGIN {print (b > 0 ? a / b : 0)}')"
done
echo "(time ratio: time per call on the long thread / on the short one; the target is at most 2x)"
