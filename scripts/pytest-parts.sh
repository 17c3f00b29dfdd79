#!/usr/bin/env bash
# The Python suite in its two parts (tests/python/conftest.py, SERIAL):
#
#   scripts/pytest-parts.sh JOBS [pytest arguments...]
#
# 1. parallel: every test not in SERIAL, under pytest-xdist with JOBS workers, each worker on a
#    database of its own copied from the test database (conftest.py, _use_worker_database),
#    each worker taking the next test when it is free (--dist worksteal);
# 2. serial: the files of SERIAL, alone on the server (they restart it, end every backend of a
#    shared role, deploy other versions, time lock waits, make databases and roles of fixed
#    names), in one process on the test database.
#
# The parts are complements (conftest.py, part_of), so the two runs hold every test once. A part
# that selects nothing (a narrow -k) is not a failure; both parts run even if the first fails.
# JOBS 0 runs the parallel part without xdist. Each part's wall time is printed.
set -uo pipefail
JOBS=${1:?usage: $0 JOBS [pytest arguments...]}
shift
VPY=${VPY:-.venv/bin/python}

run_part() {
  local part=$1 start rc
  shift
  start=$(date +%s)
  "$VPY" -m pytest --part "$part" "$@"
  rc=$?
  echo "== pytest part $part: $(($(date +%s) - start)) s (exit $rc)"
  if [ "$rc" = 5 ]; then rc=0; fi  # nothing selected in this part
  return "$rc"
}

status=0
if [ "$JOBS" = 0 ]; then
  run_part parallel "$@" || status=1
else
  run_part parallel -n "$JOBS" --dist worksteal "$@" || status=1
fi
run_part serial "$@" || status=1
exit $status
