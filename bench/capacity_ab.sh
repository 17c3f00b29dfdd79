#!/usr/bin/env bash
# Paired A/B of the capacity bench (issue 34 item 8): bench/capacity.sh run from two trees (each a
# git worktree of one commit, deploying its own SQL and importing its own python/), alternating
# which goes first, ROUNDS times, on the server of $DATABASE_URL; then the medians of each tree's
# ratios against stock-saver-per-run (which each run measures beside it) and of B/A.
#   bench/capacity_ab.sh A_TREE B_TREE [ROUNDS]      (ROUNDS: 3)
# The capacity sizes come from the environment (BENCH_CAPACITY_*: bench/capacity.sh); the stacks
# default to ours,stock-saver-per-run and the per-call profile to one short round.
# Results: $BENCH_CAPACITY_AB_DIR (default a temporary directory), one JSON per tree and round.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
a=$(cd "$1" && pwd) b=$(cd "$2" && pwd) rounds=${3:-3}
dir=${BENCH_CAPACITY_AB_DIR:-$(mktemp -d)}
mkdir -p "$dir"
export BENCH_CAPACITY_STACKS=${BENCH_CAPACITY_STACKS:-ours,stock-saver-per-run}
export BENCH_CAPACITY_OP_REPEAT=${BENCH_CAPACITY_OP_REPEAT:-2} BENCH_CAPACITY_OP_ROUNDS=${BENCH_CAPACITY_OP_ROUNDS:-1}
for r in $(seq 1 "$rounds"); do
  order="A B"; [ $((r % 2)) -eq 0 ] && order="B A"
  for t in $order; do
    tree=$a; [ "$t" = B ] && tree=$b
    echo "round $r: $t ($tree)" >&2
    (cd "$tree" && PYTHONPATH="$tree/python" BENCH_CAPACITY_OUT="$dir/$t-$r.json" BENCH_CAPACITY_SVG="$dir/$t-$r.svg" \
      PYTHON="${PYTHON:-$tree/.venv/bin/python}" bench/capacity.sh >"$dir/$t-$r.log" 2>&1) \
      || { echo "round $r: $t failed, see $dir/$t-$r.log" >&2; exit 1; }
  done
done
"${PYTHON:-$HERE/../.venv/bin/python}" "$HERE/capacity/ab_report.py" "$dir" "$rounds"
