#!/usr/bin/env bash
# A Citus formation on 127.0.0.1 for `make citus-formation` / `make test-citus` (docs/scaling.md):
# a coordinator on port $CITUS_PORT (default 6200) and $CITUS_WORKERS workers (default 2) on the
# ports after it, trust authentication on 127.0.0.1 only, data and logs under .citus/
# (git-ignored). Postgres refuses to run as root, so as root the nodes run as the `postgres` OS
# user (as scripts/pg.sh). Citus itself comes from ../shared/citus when it is not installed
# (scripts/citus-install.sh, called by the Makefile before this script).
#
#   scripts/citus.sh start     every node initialised (once) and started, the database
#                              agent_state with the citus extension on each, the workers added to
#                              the coordinator, the owner role agent_state_owner; idempotent
#   scripts/citus.sh stop      every node stopped (the data stays; `start` again resumes it)
#   scripts/citus.sh destroy   stopped and its data removed
#   scripts/citus.sh deploy    the schema deployed on the coordinator as the non-superuser owner
#                              (psql -f sql/ai.sql, as a user does), then distributed
#                              (select ai.distribute()), the test roles; idempotent
#   scripts/citus.sh env       the environment for psql against the coordinator
#   scripts/citus.sh url       the coordinator's URL (the schema owner's)
#
# Every wait is bounded (pg_ctl -w -t 60).
set -euo pipefail
unset PGHOST PGPORT PGUSER PGDATABASE PGOPTIONS
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PORT=${CITUS_PORT:-6200}
WORKERS=${CITUS_WORKERS:-2}
DB=${CITUS_DB:-agent_state}
CITUS=$ROOT/.citus
OWNER=agent_state_owner

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

node_dir() { if [ "$1" = 0 ]; then echo "$CITUS/coordinator"; else echo "$CITUS/worker$1"; fi; }
node_port() { echo $((PORT + $1)); }
nodes() { seq 0 "$WORKERS"; }

psql_su() {  # psql_su N DB ... : as the superuser postgres on node N
  local n=$1 db=$2; shift 2
  psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$(node_port "$n")" -U postgres -d "$db" "$@"
}

start_node() {
  local n=$1 dir port
  dir=$(node_dir "$n"); port=$(node_port "$n")
  if [ ! -s "$dir/PG_VERSION" ]; then
    as_pg "$PGBIN/initdb" -D "$dir" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
    cat >>"$dir/postgresql.conf" <<CONF
# agent-state Citus formation (scripts/citus.sh)
shared_preload_libraries = 'citus'
listen_addresses = '127.0.0.1'
unix_socket_directories = '$CITUS/run'
port = $port
max_connections = 200
max_prepared_transactions = 200
shared_buffers = 128MB
wal_level = logical
logging_collector = off
# Citus: a SECURITY DEFINER function of schema ai reads and writes the shards through
# connections Citus opens as the schema owner; every node trusts 127.0.0.1 here only.
citus.shard_count = 8
CONF
    # trust on 127.0.0.1 only (the formation never listens elsewhere)
    cat >"$dir/pg_hba.conf" <<HBA
local all all trust
host all all 127.0.0.1/32 trust
HBA
  fi
  if ! as_pg "$PGBIN/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
    as_pg "$PGBIN/pg_ctl" -D "$dir" -l "$CITUS/logs/node$n.log" -w -t 60 start >/dev/null
  fi
}

start() {
  if [ ! -f "$("$PGBIN/pg_config" --pkglibdir)/citus.so" ]; then
    echo "citus.sh: Citus is not installed (make citus-formation installs it from ../shared/citus)" >&2
    return 1
  fi
  mkdir -p "$CITUS/logs" "$CITUS/run"
  if [ "$(id -u)" = 0 ]; then chown -R postgres: "$CITUS"; fi
  local n
  for n in $(nodes); do start_node "$n"; done
  # The database on every node and the extension in it (a superuser's steps); the workers then
  # join the coordinator, which from then on propagates roles, schemas, types and functions to
  # them. The owner role is made on the coordinator after that, so Citus makes it on the workers
  # (as a superuser) and counts it as distributed: a role made on each node by hand would make
  # the owner's first function try to ALTER it on the workers, which only a superuser may.
  for n in $(nodes); do
    psql_su "$n" postgres <<SQL
set client_min_messages = warning;
select format('create database %I', '$DB') where not exists (select from pg_database where datname = '$DB') \gexec
SQL
    psql_su "$n" "$DB" -c 'set client_min_messages = warning' -c 'create extension if not exists citus'
  done
  {
  psql_su 0 "$DB" <<SQL
set client_min_messages = warning;
select citus_set_coordinator_host('127.0.0.1', $PORT);
$(for n in $(seq 1 "$WORKERS"); do
  echo "select citus_add_node('127.0.0.1', $(node_port "$n")) where not exists (select from pg_dist_node where nodeport = $(node_port "$n"));"
done)
select format('create role %I login createrole', '$OWNER')
 where not exists (select from pg_roles where rolname = '$OWNER') \gexec
SQL
  } >/dev/null
  for n in $(nodes); do
    psql_su "$n" "$DB" -c 'set citus.enable_ddl_propagation = off' -c "alter database $DB owner to $OWNER" >/dev/null
  done
  echo "citus.sh: formation up: coordinator 127.0.0.1:$PORT, workers $(seq -s, $((PORT + 1)) $((PORT + WORKERS))), database $DB"
}

stop() {
  local n dir
  for n in $(seq "$WORKERS" -1 0); do
    dir=$(node_dir "$n")
    if [ -s "$dir/PG_VERSION" ] && as_pg "$PGBIN/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
      as_pg "$PGBIN/pg_ctl" -D "$dir" -m fast -w -t 60 stop >/dev/null
    fi
  done
}

deploy() {
  local url="postgresql://$OWNER@127.0.0.1:$PORT/$DB"
  if ! psql -X -Atq "$url" -c "select 1 from pg_namespace where nspname = 'ai'" | grep -q 1; then
    psql -X -q -v ON_ERROR_STOP=1 "$url" -f sql/ai.sql >"$CITUS/logs/deploy.log" 2>&1 \
      || { tail -20 "$CITUS/logs/deploy.log" >&2; return 1; }
  fi
  psql -X -q -At -v ON_ERROR_STOP=1 "$url" -c 'set client_min_messages = warning' -c 'select ai.distribute()' \
    >"$CITUS/logs/distribute.log" 2>&1 || { tail -20 "$CITUS/logs/distribute.log" >&2; return 1; }
  # The test roles (as tests/pgtap/fixtures/setup.sql makes them on one server), made on the
  # coordinator, which propagates them to the workers; pgTAP.
  psql_su 0 "$DB" <<'SQL' >/dev/null
set client_min_messages = warning;
create extension if not exists pgtap;
select format('create role %I login', r) from unnest('{tenant_a,tenant_b,app_service,outsider}'::text[]) r
 where not exists (select from pg_roles where rolname = r) \gexec
select 'create role ai_test_clock nologin' where not exists (select from pg_roles where rolname = 'ai_test_clock') \gexec
grant ai_user to tenant_a, tenant_b;
grant ai_service to app_service;
grant ai_test_clock to tenant_a, tenant_b, app_service;
SQL
  echo "citus.sh: schema deployed and distributed ($(grep -c . "$CITUS/logs/distribute.log") steps: .citus/logs/distribute.log)"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  destroy) stop; rm -rf "$CITUS" ;;
  deploy) deploy ;;
  env) echo "export PGHOST=127.0.0.1 PGPORT=$PORT PGUSER=postgres PGDATABASE=$DB" ;;
  url) echo "postgresql://$OWNER@127.0.0.1:$PORT/$DB" ;;
  *) echo "usage: $0 start|stop|destroy|deploy|env|url" >&2; exit 2 ;;
esac
