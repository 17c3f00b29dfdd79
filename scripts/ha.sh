#!/usr/bin/env bash
# A pg_auto_failover formation on 127.0.0.1 for `make test-ha` (docs/high-availability.md): a
# monitor on port $HA_PORT (default 6100) and $HA_NODES nodes (default 2) on the ports after it,
# synchronous replication (pg_auto_failover's default with a standby: ANY 1), trust
# authentication on 127.0.0.1 only, data and logs under .ha/ (git-ignored). pg_autoctl and
# Postgres refuse to run as root, so as root they run as the `postgres` OS user (as scripts/pg.sh).
#
#   scripts/ha.sh up            the formation from nothing, the schema deployed as the non-superuser
#                               owner agent_state_owner with `psql -f sql/ai.sql`, the test roles
#   scripts/ha.sh down          every process of the formation stopped, its data removed (.ha/logs kept)
#   scripts/ha.sh state         `pg_autoctl show state`
#   scripts/ha.sh kill N        SIGKILL node N's keeper and postmaster (an unplanned failure)
#   scripts/ha.sh start N       node N's keeper again (it rejoins the formation)
#   scripts/ha.sh wait-state S1,S2,...   until the nodes' reported states are these, in node order
#   scripts/ha.sh failover      `pg_autoctl perform failover` (planned; returns when it is done)
#
# Every wait is bounded (HA_WAIT seconds, default 120).
set -euo pipefail
unset PGHOST PGPORT PGUSER PGDATABASE PGOPTIONS
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
NODES=${HA_NODES:-2}
PORT=${HA_PORT:-6100}
WAIT=${HA_WAIT:-120}
HA=$ROOT/.ha
DATA=$HA/data
LOGS=$HA/logs
MONITOR_URL="postgres://autoctl_node@127.0.0.1:$PORT/pg_auto_failover?sslmode=disable"
export PATH=$PGBIN:$PATH

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- env PATH="$PATH" HOME="$HA" XDG_CONFIG_HOME="$HA/config" \
      XDG_DATA_HOME="$HA/share" XDG_RUNTIME_DIR="$HA/run" "$@"
  else env HOME="$HA" XDG_CONFIG_HOME="$HA/config" XDG_DATA_HOME="$HA/share" XDG_RUNTIME_DIR="$HA/run" "$@"; fi
}

node_dir() { if [ "$1" = 0 ]; then echo "$DATA/monitor"; else echo "$DATA/node$1"; fi; }

# The keeper of node N (0: the monitor) in the background, its own process group, its pid in .ha/.
run_keeper() {
  local n=$1 dir
  dir=$(node_dir "$n")
  setsid bash -c "$(declare -f as_pg); HA='$HA'; PATH='$PATH'; as_pg pg_autoctl run --pgdata '$dir'" \
    >>"$LOGS/keeper$n.log" 2>&1 </dev/null &
  echo $! >"$HA/keeper$n.pid"
}

psql_admin() { psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -U postgres "$@"; }

show_state() { as_pg pg_autoctl show state --pgdata "$DATA/monitor" 2>/dev/null; }

# The reported state of each node, in node order (node1,node2,...), from the monitor.
states() {
  psql -X -Atq -h 127.0.0.1 -p "$PORT" -U autoctl_node -d pg_auto_failover \
    -c "select string_agg(reportedstate::text, ',' order by nodeport) from pgautofailover.node" 2>/dev/null || true
}

wait_state() {
  local want=$1 deadline=$((SECONDS + WAIT)) now
  while [ $SECONDS -lt $deadline ]; do
    now=$(states)
    if [ "$now" = "$want" ]; then return 0; fi
    sleep 0.5
  done
  echo "ha.sh: the formation did not reach $want within $WAIT s (last: $(states))" >&2
  show_state >&2 || true
  return 1
}

up() {
  down_quiet
  mkdir -p "$DATA" "$LOGS" "$HA/config" "$HA/share" "$HA/run"
  # the last run's process logs (a failed run's acked-*.jsonl stays)
  rm -f "$LOGS"/keeper*.log "$LOGS"/create*.log "$LOGS"/deploy.log "$LOGS"/*.err "$LOGS"/rejected-*.log
  if [ "$(id -u)" = 0 ]; then chown -R postgres: "$HA"; fi
  # The monitor
  as_pg pg_autoctl create monitor --pgdata "$DATA/monitor" --pgport "$PORT" --hostname 127.0.0.1 --listen 127.0.0.1 \
    --pgctl "$PGBIN/pg_ctl" --auth trust --no-ssl >>"$LOGS/create0.log" 2>&1
  run_keeper 0
  local deadline=$((SECONDS + WAIT))
  until psql -X -Atq -h 127.0.0.1 -p "$PORT" -U autoctl_node -d pg_auto_failover -c 'select 1' >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || { echo "ha.sh: the monitor did not start" >&2; return 1; }
    sleep 0.5
  done
  # The nodes, one after the other: the first becomes the primary, the others its standbys.
  local n want=""
  for n in $(seq 1 "$NODES"); do
    as_pg pg_autoctl create postgres --pgdata "$DATA/node$n" --pgport $((PORT + n)) --hostname 127.0.0.1 --listen 127.0.0.1 \
      --name "node$n" --pgctl "$PGBIN/pg_ctl" --dbname agent_state --monitor "$MONITOR_URL" \
      --auth trust --no-ssl >>"$LOGS/create$n.log" 2>&1
    run_keeper "$n"
    if [ "$n" = 1 ]; then want="primary"; wait_state "single"; else want="$want,secondary"; fi
  done
  want="primary$(printf ',secondary%.0s' $(seq 2 "$NODES"))"
  wait_state "$want"
  # The schema as a user deploys it: a non-superuser owner, psql -f sql/ai.sql.
  local primary=$((PORT + 1))
  psql_admin -p "$primary" -d agent_state <<'SQL'
set client_min_messages = warning;
create role agent_state_owner login createrole;
alter database agent_state owner to agent_state_owner;
grant create on database agent_state to agent_state_owner;
SQL
  psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$primary" -U agent_state_owner -d agent_state \
    -f sql/ai.sql >>"$LOGS/deploy.log" 2>&1
  psql_admin -p "$primary" -d agent_state <<'SQL'
set client_min_messages = warning;
create role tenant_a login;
create role app_service login;
create role console_operator login password 'ha-console-operator';
grant ai_user to tenant_a;
grant ai_service to app_service, console_operator;
SQL
  # The console's login takes only a server that asks for the password (docs/console.md): the
  # formation trusts 127.0.0.1, so console_operator gets a line of its own above the others, on
  # every node (a node that rejoins by pg_rewind or a base backup copies the primary's file).
  for n in $(seq 1 "$NODES"); do
    local hba="$DATA/node$n/pg_hba.conf"
    { echo "host all console_operator 127.0.0.1/32 scram-sha-256"; cat "$hba"; } >"$hba.new"
    mv "$hba.new" "$hba"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$hba"; fi
    psql_admin -p $((PORT + n)) -d agent_state -c 'select pg_reload_conf()' >/dev/null
  done
  echo "ha.sh: formation up: monitor 127.0.0.1:$PORT, nodes $(seq -s, $((PORT + 1)) $((PORT + NODES))), states $(states)"
}

kill_tree() {  # the process group of a keeper we started (setsid made it its leader)
  local pidfile=$1 sig=$2 pid
  [ -s "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  kill "-$sig" -- "-$pid" 2>/dev/null || true
}

down_quiet() {
  [ -d "$HA" ] || return 0
  local n
  for n in $(seq "$NODES" -1 0) 3 2 1; do  # the nodes first, then the monitor; a three-node leftover too
    [ -d "$(node_dir "$n")" ] || continue
    as_pg pg_autoctl stop --pgdata "$(node_dir "$n")" --immediate >/dev/null 2>&1 || true
    kill_tree "$HA/keeper$n.pid" TERM
  done
  sleep 1
  for n in 0 1 2 3; do
    kill_tree "$HA/keeper$n.pid" KILL
    rm -f "$HA/keeper$n.pid"
    # a postmaster left by a killed keeper
    if [ -s "$(node_dir "$n")/postmaster.pid" ]; then
      kill -KILL "$(head -1 "$(node_dir "$n")/postmaster.pid")" 2>/dev/null || true
    fi
  done
  rm -rf "$DATA" "$HA/config" "$HA/share" "$HA/run"
}

kill_node() {
  local n=$1 dir
  dir=$(node_dir "$n")
  kill_tree "$HA/keeper$n.pid" KILL  # the keeper and its supervised children (pg_autoctl's)
  if [ -s "$dir/postmaster.pid" ]; then kill -KILL "$(head -1 "$dir/postmaster.pid")" 2>/dev/null || true; fi
}

case "${1:-}" in
  up) up ;;
  down) down_quiet ;;
  state) show_state ;;
  states) states ;;
  wait-state) wait_state "$2" ;;
  kill) kill_node "$2" ;;
  start) run_keeper "$2" ;;
  failover) as_pg pg_autoctl perform failover --pgdata "$DATA/monitor" --wait "$WAIT" ;;
  *) echo "usage: $0 up|down|state|states|wait-state S,...|kill N|start N|failover" >&2; exit 2 ;;
esac
