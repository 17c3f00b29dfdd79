#!/usr/bin/env bash
# The embedded default: a private Postgres cluster under .pgdata/ with its own unix socket.
# It listens on no TCP address, so it can never collide with (or touch) any other server.
# Postgres refuses to run as root, so as root the cluster runs as the `postgres` OS user.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
DATA=$ROOT/.pgdata/data
SOCK=$ROOT/.pgdata/run
PORT=${AGENT_STATE_PGPORT:-54329}
LOG=$ROOT/.pgdata/postgres.log

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
  mkdir -p "$ROOT/.pgdata"
  if [ "$(id -u)" = 0 ]; then chown postgres: "$ROOT/.pgdata"; fi
  if [ ! -s "$DATA/PG_VERSION" ]; then
    as_owner "$PGBIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
    as_owner mkdir -p "$SOCK"
    cat >>"$DATA/postgresql.conf" <<CONF
# agent-state private cluster
listen_addresses = ''
unix_socket_directories = '$SOCK'
unix_socket_permissions = 0700
port = $PORT
max_connections = 200
shared_buffers = 256MB
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

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  env) echo "export PGHOST=$SOCK PGPORT=$PORT PGUSER=postgres" ;;
  *) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac
