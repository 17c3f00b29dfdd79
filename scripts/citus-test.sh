#!/usr/bin/env bash
# The suites of `make test-citus` against a formation scripts/citus.sh built, deployed and
# distributed (docs/scaling.md, "What runs on a formation"), each part timed:
#
#   pgtap     the pgTAP files of tests/citus/pgtap.txt, and those of pgtap-owner-reads.txt with
#             the superuser's reads through the owner's connections (owner_reads below)
#   citus     tests/citus: the identity attacks, setup() and `make demo` on databases of their own
#             (the demo's crash and resume), SET LOCAL after a carried call, the pgTAP lists (every
#             file in one; the files left still fail as their lines say)
#   pytest    the tests of tests/python listed in tests/citus/pytest.txt, against the coordinator
#             (AGENT_STATE_TEST_DSN names its database, one process); tests/citus/pytest-left.txt
#             lists every other file or test of tests/python, and why it is not run there
#   upstream  LangGraph's checkpointer conformance suite (the saver suite of
#             langgraph-checkpoint-postgres, as `make test-upstream` runs it) in the formation's
#             database itself, the whole suite (158 passed, 76 skipped and 26 xfailed as on one server)
#
#   scripts/citus-test.sh [PART ...]    every part by default, in this order (pgTAP first, on the
#                                       fresh database); exit 1 when any failed
#
# Environment: CITUS_PORT (6200), VPY (.venv/bin/python), UPSTREAM (.upstream, laid out by
# tests/upstream/langgraph/prepare.py), CITUS_ARGS (more pytest arguments for the citus part).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PORT=${CITUS_PORT:-6200}
VPY=${VPY:-$ROOT/.venv/bin/python}
UPSTREAM=${UPSTREAM:-$ROOT/.upstream}
DSN="postgresql://postgres@127.0.0.1:$PORT/agent_state"
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(pgtap citus pytest upstream)  # pgTAP first: some files count every row of a table (a fresh database, as on one server)
# a list's entries: one a line, `#` comments (whole lines, or after two spaces) left out
listed() { grep -v '^#' "$1" | sed 's/  #.*//; s/[[:space:]]*$//' | grep -v '^$'; }

# A copy of tests/pgtap in which the superuser's steps after `reset role;` read through the schema
# owner's connections (the files themselves unchanged). Most pgTAP files write as a tenant, then
# `reset role;` and assert on the tables as the superuser, in one transaction: on a formation the
# tenant's writes reached the shards over the owner's connections (SECURITY DEFINER), and Citus
# refuses another user's query on those placements in the same transaction ("cannot perform query
# on placements that were modified in this transaction by a different user"). Here, after each
# `reset role;`, the superuser's identity is carried to the shards (ai._formation_caller, as the
# functions carry theirs; acting for nobody) and the role is set to the owner: the owner's
# connections then read the shards, and every policy of ai and ai_archive lets the carried
# superuser see every row (owner = ai.current_owner() or ai.sees_all_owners(), or true), as the
# superuser sees them on one server, so no assertion sees less. What the owner may not do that a
# superuser may (catalog reads of other roles' sessions, DDL) fails rather than passes. The
# superuser's own `delete from` a distributed table before the tenants write (to count only the
# file's rows) runs the same way, as the carried superuser over the owner's connections, and the
# role goes back to the superuser after it. Then every
# statement that is one pgTAP call gets a one-row table of the coordinator in FROM, so Citus runs
# the call on the coordinator rather than routing it whole to the worker that holds the thread
# read, where pgTAP has no plan (scripts/pgtap_coordinator_asserts.py: what is asserted is the same).
owner_reads() {
  local dest=$1
  rm -rf "$dest"; mkdir -p "$dest"; cp -r tests/pgtap/. "$dest/"
  "$VPY" scripts/pgtap_coordinator_asserts.py "$dest"
}

run_part() {
  case "$1" in
    citus)
      CITUS_PORT=$PORT "$VPY" -m pytest -q -p no:cacheprovider -o addopts= --timeout=600 tests/citus ${CITUS_ARGS:-} ;;
    pgtap)
      # shellcheck disable=SC2046
      local failed=0
      pg_prove -h 127.0.0.1 -p "$PORT" -U postgres -d agent_state --failures $(listed tests/citus/pgtap.txt) || failed=1
      # the files whose superuser's reads go through the owner's connections (owner_reads below)
      owner_reads "$ROOT/.citus/pgtap-owner-reads"
      # shellcheck disable=SC2046
      (cd "$ROOT/.citus/pgtap-owner-reads" && pg_prove -h 127.0.0.1 -p "$PORT" -U postgres -d agent_state --failures \
         $(listed "$ROOT/tests/citus/pgtap-owner-reads.txt" | sed 's#^tests/pgtap/##')) || failed=1
      return $failed ;;
    pytest)
      local ids
      mapfile -t ids < <(listed tests/citus/pytest.txt)  # node ids may hold spaces
      [ ${#ids[@]} -gt 0 ] || return 0  # (no argument would be the whole suite)
      env -u AGENT_STATE_TEST_TEMPLATE -u AGENT_STATE_TEST_DIRECT_DSN -u AGENT_STATE_TEST_POOLER_DSN \
        AGENT_STATE_TEST_DSN="$DSN" CITUS_PORT=$PORT \
        "$VPY" -m pytest -q -p no:cacheprovider --timeout=120 "${ids[@]}" ;;
    upstream)
      "$VPY" tests/upstream/langgraph/prepare.py "$UPSTREAM" >/dev/null || return 1
      # its tenant and service (tenant_a, app_service) as a production cluster has them, outside
      # ai_test_clock (scripts/citus.sh grants it for the pgTAP files): the suite never freezes the
      # clock, and a delegated call of a role that may is refused (AS072; in pipeline mode that
      # aborts the calls queued with it). Granted back after, as tests/citus/conftest.py does.
      psql -X -q -v ON_ERROR_STOP=1 "$DSN" -c 'revoke ai_test_clock from tenant_a, tenant_b, app_service' || return 1
      local failed=0
      (cd "$UPSTREAM/saver" && AGENT_STATE_UPSTREAM_IN_PLACE=1 AGENT_STATE_TEST_DSN="$DSN" \
        PYTHONPATH="$ROOT/tests/upstream/langgraph" \
        "$VPY" -m pytest -q -p no:cacheprovider -o addopts= -o asyncio_mode=auto \
          -o asyncio_default_fixture_loop_scope=function -p no:anyio --timeout=300 tests) || failed=1
      psql -X -q -v ON_ERROR_STOP=1 "$DSN" -c 'grant ai_test_clock to tenant_a, tenant_b, app_service' || failed=1
      return $failed ;;
    *) echo "citus-test.sh: no part $1 (citus, pgtap, pytest, upstream)" >&2; return 2 ;;
  esac
}

status=0
summary=()
for part in "${parts[@]}"; do
  start=$(date +%s)
  echo "== test-citus: $part"
  if run_part "$part"; then result=ok; else result=FAILED; status=1; fi
  summary+=("$part: $result in $(( $(date +%s) - start )) s")
done
printf 'test-citus: %s\n' "${summary[@]}"
exit $status
