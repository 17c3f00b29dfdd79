#!/usr/bin/env bash
# Appends: ai.append_message_idempotent against the same append written as bare SQL, with pgbench,
# at 1 and 4 clients, each point repeated; prints medians and ratios. Run by `make bench`, in a
# database of its own (bench/common.bash).
set -euo pipefail
cd "$(dirname "$0")/sessions"
DURATION=${BENCH_SECONDS:-5}
REPEATS=${BENCH_REPEATS:-3}
ROOT=$(cd .. && cd .. && pwd)
. ../common.bash
bench_init agent_state_bench_sessions
bench_database
bench_deploy
prefix="bench$(date +%s)-"
tenant_url=$(url_with "$bench_url" user=bench_tenant)
psql -X -q -v ON_ERROR_STOP=1 -d "$bench_url" -f setup.sql >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -v prefix="$prefix" -d "$tenant_url" -f sessions.sql >/dev/null

tps() {  # script clients -> median tps over the repeats
  local script=$1 clients=$2 runs=()
  for _ in $(seq "$REPEATS"); do
    runs+=("$(pgbench -n -f "$script" -c "$clients" -j "$clients" -T "$DURATION" -D prefix="$prefix" \
      "$tenant_url" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p')")
  done
  printf '%s\n' "${runs[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

printf '%-44s %8s %10s %10s\n' "appends per second (median of $REPEATS x ${DURATION}s)" clients tps "ratio"
for clients in 1 4; do
  bare=$(tps baseline_bare.sql "$clients")
  counter=$(tps baseline_counter.sql "$clients")
  append=$(tps append.sql "$clients")
  keyed=$(tps append_keyed.sql "$clients")
  retry=$(tps retry.sql "$clients")
  for row in "bare INSERT (ceiling):$bare" "bare SQL, gapless counter (baseline):$counter" \
             "ai.append_message_idempotent, hashed key:$append" "ai.append_message_idempotent, caller's key:$keyed" \
             "retry of an existing message:$retry"; do
    name=${row%%:*}; value=${row##*:}
    printf '%-44s %8s %10.0f %9.2fx\n' "$name" "$clients" "$value" "$(awk -v a="$value" -v b="$counter" 'BEGIN {print (b > 0 ? a / b : 0)}')"
  done
done
echo "(ratio: against the bare-SQL gapless counter at the same client count; RLS is paid: clients run as an ai_user tenant)"
