#!/usr/bin/env bash
# A private PgBouncer in front of the private cluster (scripts/pg.sh), in TRANSACTION pooling:
# the way most hosted Postgres is reached, and the trap issue 11 found (server-side prepared
# statements and LISTEN do not survive a change of server connection). Unix socket only, under
# .pgdata/bouncer, so worktrees never collide. Authentication is the cluster's (trust on its
# socket): PgBouncer trusts the user name and looks unknown ones up through auth_user.
#
# The pool is kept small (default_pool_size 4) so that concurrent clients really share server
# connections, and max_prepared_statements is not set: PgBouncer 1.18 (Debian's) has no prepared
# statement support, like many poolers in production. That is the worst case, on purpose.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
SOCK=$ROOT/.pgdata/run
PORT=${AGENT_STATE_PGPORT:-54329}
DIR=$ROOT/.pgdata/bouncer
BPORT=${AGENT_STATE_BOUNCER_PORT:-$((PORT + 1))}
PIDFILE=$DIR/pgbouncer.pid
BOUNCER=${PGBOUNCER:-$(command -v pgbouncer || echo /usr/sbin/pgbouncer)}

running() {
  [ -s "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null
}

start() {
  if running; then return 0; fi
  mkdir -p "$DIR"
  echo '"postgres" ""' >"$DIR/userlist.txt"
  cat >"$DIR/pgbouncer.ini" <<INI
[databases]
* = host=$SOCK port=$PORT

[pgbouncer]
listen_addr =
listen_port = $BPORT
unix_socket_dir = $DIR
unix_socket_mode = 0700
auth_type = trust
auth_file = $DIR/userlist.txt
auth_user = postgres
pool_mode = transaction
default_pool_size = 4
max_client_conn = 1000
max_db_connections = 40
server_login_retry = 1
query_wait_timeout = 60
logfile = $DIR/pgbouncer.log
pidfile = $PIDFILE
admin_users = postgres
; PgBouncer 1.18 refuses the startup parameter "options"; a test passes -c lock_timeout there
; as an extra bound (it has its own timeouts), so it is dropped rather than refused.
ignore_startup_parameters = extra_float_digits,options
INI
  if [ "$(id -u)" = 0 ]; then
    chown -R postgres: "$DIR"
    runuser -u postgres -- "$BOUNCER" -d -q "$DIR/pgbouncer.ini"
  else
    "$BOUNCER" -d -q "$DIR/pgbouncer.ini"
  fi
  for _ in $(seq 50); do
    [ -S "$DIR/.s.PGSQL.$BPORT" ] && return 0
    sleep 0.1
  done
  echo "pgbouncer did not start; see $DIR/pgbouncer.log" >&2
  exit 1
}

stop() {
  if running; then
    pid=$(cat "$PIDFILE")
    kill -INT "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  env) echo "export PGHOST=$DIR PGPORT=$BPORT PGUSER=postgres" ;;
  *) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac
