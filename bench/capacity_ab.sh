#!/usr/bin/env bash
# Paired A/B of the capacity bench (issue 34 item 8): bench/capacity.sh run from two or more trees
# (each a git worktree of one commit, deploying its own SQL and importing its own python/; named
# A, B, C, ... in the order given), the order rotating between rounds, on the server of
# $DATABASE_URL; then per tree the medians of ours' ratios against stock-saver-per-run (which each
# run measures beside it) and of ours' figures against A's.
#   bench/capacity_ab.sh A_TREE B_TREE [C_TREE ...]
# BENCH_CAPACITY_AB_ROUNDS (3) rounds. The capacity sizes come from the environment
# (BENCH_CAPACITY_*: bench/capacity.sh); the stacks default to ours,stock-saver-per-run, and the
# per-call profile is left out (BENCH_CAPACITY_PER_OP=0). WAL per step is the cluster's: run it on
# a server nothing else writes to (a private cluster). Each tree runs its own bench/capacity.sh
# (the per-call profile needs BENCH_CAPACITY_PER_OP there). Results: $BENCH_CAPACITY_AB_DIR (default a
# temporary directory), one JSON per tree and round.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
rounds=${BENCH_CAPACITY_AB_ROUNDS:-3}
names=(A B C D E F)
trees=()
for t in "$@"; do trees+=("$(cd "$t" && pwd)"); done
[ ${#trees[@]} -ge 2 ] || { echo "usage: $0 A_TREE B_TREE [C_TREE ...]" >&2; exit 2; }
dir=${BENCH_CAPACITY_AB_DIR:-$(mktemp -d)}
mkdir -p "$dir"
export BENCH_CAPACITY_STACKS=${BENCH_CAPACITY_STACKS:-ours,stock-saver-per-run}
export BENCH_CAPACITY_PER_OP=${BENCH_CAPACITY_PER_OP:-0}
n=${#trees[@]}
for r in $(seq 1 "$rounds"); do
  for k in $(seq 0 $((n - 1))); do
    i=$(( (k + r - 1) % n ))
    t=${names[$i]} tree=${trees[$i]}
    echo "round $r: $t ($tree)" >&2
    (cd "$tree" && PYTHONPATH="$tree/python" BENCH_CAPACITY_OUT="$dir/$t-$r.json" BENCH_CAPACITY_SVG="$dir/$t-$r.svg" \
      PYTHON="${PYTHON:-$tree/.venv/bin/python}" bench/capacity.sh >"$dir/$t-$r.log" 2>&1) \
      || { echo "round $r: $t failed, see $dir/$t-$r.log" >&2; exit 1; }
  done
done
"${PYTHON:-$HERE/../.venv/bin/python}" "$HERE/capacity/ab_report.py" "$dir" "$rounds" "${names[@]:0:$n}"
