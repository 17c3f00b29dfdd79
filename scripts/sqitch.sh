#!/usr/bin/env bash
# sqitch against a libpq URL: `scripts/sqitch.sh URL deploy --verify`.
# Sqitch's pg engine talks to the registry through DBD::Pg and runs scripts with psql; both
# honour the PG* environment, which is how the URL's parts (a socket directory in ?host=, a
# password) reach them. The target is then plain db:pg:.
#
# Bounded under a live fleet (docs/operations.md, "Upgrading under a live fleet"): every script
# runs with lock_timeout = $AGENT_STATE_LOCK_TIMEOUT (default 5s), so a script that must lock a
# hot table waits at most that long behind an open transaction, and the workers queued behind
# the script wait no longer either. A deploy that fails on a lock timeout has rolled back the
# change it was in (each script is one transaction; --mode change keeps the changes before it)
# and is run again, $AGENT_STATE_DEPLOY_RETRIES times (default 5) after a pause that doubles
# from one second; then it fails, and running it again later continues where it stopped.
#
# `scripts/sqitch.sh --as-owner URL deploy ...` (the Makefile's DATABASE_URL branch): when the
# URL's role is a superuser, sqitch deploys as the non-superuser owner role agent_state_owner
# instead (made when missing, with the group roles and CREATE on the database, as
# agent_state.schema.deploy does), through SET ROLE at connection start (PGOPTIONS=-c role=...),
# and one line on stderr says so. A BYPASSRLS role that is no superuser is refused (no safe owner).
# AGENT_STATE_OWNER names another owner role than agent_state_owner (made NOLOGIN when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
as_owner=0
if [ "${1:-}" = "--as-owner" ]; then as_owner=1; shift; fi
url=$1; shift
eval "$(.venv/bin/python - "$url" "$as_owner" <<'PY'
import shlex, sys
from psycopg.conninfo import conninfo_to_dict
names = {"host": "PGHOST", "port": "PGPORT", "user": "PGUSER", "password": "PGPASSWORD",
         "dbname": "PGDATABASE", "sslmode": "PGSSLMODE", "options": "PGOPTIONS"}
for key, value in conninfo_to_dict(sys.argv[1]).items():
    if key in names and value is not None:
        print(f"export {names[key]}={shlex.quote(str(value))}")
if sys.argv[2] == "1":
    import psycopg
    sys.path.insert(0, "python")
    import os
    from agent_state.schema import OWNER, SchemaError, prepare_owner
    try:
        with psycopg.connect(sys.argv[1], autocommit=True) as conn:
            role, note = prepare_owner(conn, os.environ.get("AGENT_STATE_OWNER") or OWNER)
    except SchemaError as error:
        print(f"echo {shlex.quote('sqitch.sh: ' + str(error))} >&2; exit 1")
        sys.exit(0)
    if role:
        options = " ".join(filter(None, [conninfo_to_dict(sys.argv[1]).get("options"), f"-c role={role}"]))
        print(f"export PGOPTIONS={shlex.quote(str(options))}")
        print(f"echo {shlex.quote('sqitch.sh: ' + str(note))} >&2")
PY
)"
export PGOPTIONS="${PGOPTIONS:-} -c lock_timeout=${AGENT_STATE_LOCK_TIMEOUT:-5s}"
deploying=0
for arg in "$@"; do [ "$arg" = deploy ] && deploying=1 && break; done
if [ "$deploying" = 0 ]; then
  exec sqitch "$@" db:pg:
fi
mode=()
for arg in "$@"; do case "$arg" in --mode|--mode=*) mode=(); break;; esac; mode=(--mode change); done
retries=${AGENT_STATE_DEPLOY_RETRIES:-5}
pause=1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for ((try = 0; ; try++)); do
  if sqitch "$@" "${mode[@]}" db:pg: > >(tee "$log") 2> >(tee -a "$log" >&2); then
    exit 0
  fi
  wait  # the tees
  if ! grep -q "lock timeout" "$log" || [ "$try" -ge "$retries" ]; then
    exit 1
  fi
  echo "agent-state: a lock timeout stopped the deploy (a transaction holds a table it needs); again in ${pause}s" >&2
  sleep "$pause"
  pause=$((pause * 2))
done
