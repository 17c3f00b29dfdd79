#!/usr/bin/env bash
# The Python suite in its three parts (tests/python/conftest.py, SERIAL and BESIDE):
#
#   scripts/pytest-parts.sh JOBS [pytest arguments...]
#
# 1. parallel: every test not in SERIAL or BESIDE, under pytest-xdist with JOBS workers, each
#    worker on a database of its own copied from the template (conftest.py,
#    _use_worker_database), each worker taking the next test when it is free (--dist worksteal);
# 2. beside, at the same time: the files of BESIDE in their lanes, a process per lane, each on a
#    copy of the template of its own, running its files' tests one at a time (they make databases
#    and roles of fixed names: not two at once, but nothing shared with the parallel part or
#    another lane). Each lane's output goes to a file while the parallel part prints, and is
#    printed after it. With JOBS 0, or when the workers copy the test database itself (no
#    AGENT_STATE_TEST_TEMPLATE: a session on it would keep a worker from copying it), the beside
#    part runs after the parallel part instead, in one process on the test database;
# 3. serial: the files of SERIAL, alone on the server (they restart it, end every backend of a
#    shared role, time lock waits), in one process on the test database.
#
# The parts are complements (conftest.py, part_of), so the runs hold every test once. A part or
# lane that selects nothing (a narrow -k) is not a failure; every part runs even if another
# fails, and the script fails if any did. Each part's wall time is printed.
set -uo pipefail
JOBS=${1:?usage: $0 JOBS [pytest arguments...]}
shift
VPY=${VPY:-.venv/bin/python}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

run_part() {
  local part=$1 start rc
  shift
  start=$(date +%s)
  "$VPY" -m pytest --part "$part" "$@"
  rc=$?
  echo "== pytest part $part${lane:+, lane $lane}: $(($(date +%s) - start)) s (exit $rc)"
  if [ "$rc" = 5 ]; then rc=0; fi  # nothing selected in this part
  return "$rc"
}

status=0
lane=
if [ "$JOBS" = 0 ]; then
  run_part parallel "$@" || status=1
  run_part beside "$@" || status=1
elif [ -z "${AGENT_STATE_TEST_TEMPLATE:-}" ]; then
  run_part parallel -n "$JOBS" --dist worksteal "$@" || status=1
  run_part beside "$@" || status=1
else
  lanes=$(PYTHONPATH="$ROOT/tests/python" "$VPY" -c \
    'from conftest import BESIDE; print(*sorted({lane for lane, _ in BESIDE.values()}))') || exit 1
  logs=$(mktemp -d)
  trap 'rm -rf "$logs"' EXIT
  pids=()
  for lane in $lanes; do
    run_part beside --lane "$lane" "$@" >"$logs/$lane" 2>&1 &
    pids+=("$!")
  done
  lane=
  run_part parallel -n "$JOBS" --dist worksteal "$@" || status=1
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  for lane in $lanes; do
    echo "== pytest part beside, lane $lane (ran at the same time as the parallel part):"
    cat "$logs/$lane"
  done
  lane=
fi
run_part serial "$@" || status=1
exit $status
