#!/usr/bin/env bash
# ai.context_window on a 100,000-message thread against a 100-message thread (both compacted to
# a 50-message tail), pgbench at 1 and 4 clients, medians of repeats, ratio. Run by `make bench`.
set -euo pipefail
cd "$(dirname "$0")/compaction"
DURATION=${BENCH_SECONDS:-5}
REPEATS=${BENCH_REPEATS:-3}
url=${DATABASE_URL:?DATABASE_URL is set by make bench}
psql -X -q -v ON_ERROR_STOP=1 -d "$url" -f ../sessions/setup.sql -v prefix="compaction$(date +%s)-" >/dev/null 2>&1
psql -X -q -v ON_ERROR_STOP=1 -d "$url" -f setup.sql >/dev/null
if [[ "$url" == *\?* ]]; then tenant_url="$url&user=bench_tenant"; else tenant_url="$url?user=bench_tenant"; fi

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
  large=$(tps window-100000 "$clients")
  printf '%-52s %8s %10.0f %9.2fx\n' "100-message thread (baseline)" "$clients" "$small" 1
  printf '%-52s %8s %10.0f %9.2fx\n' "100,000-message thread" "$clients" "$large" \
    "$(awk -v a="$small" -v b="$large" 'BEGIN {print (b > 0 ? a / b : 0)}')"
done
echo "(time ratio: time per call on the long thread / on the short one; the target is at most 2x)"
