#!/usr/bin/env bash
# sqitch against a libpq URL: `scripts/sqitch.sh URL deploy --verify`.
# Sqitch's pg engine talks to the registry through DBD::Pg and runs scripts with psql; both
# honour the PG* environment, which is how the URL's parts (a socket directory in ?host=, a
# password) reach them. The target is then plain db:pg:.
#
# `scripts/sqitch.sh --as-owner URL deploy ...` (the Makefile's DATABASE_URL branch): when the
# URL's role is a superuser, sqitch deploys as the non-superuser owner role agent_state_owner
# instead (made when missing, with the group roles and CREATE on the database, as
# agent_state.schema.deploy does), through SET ROLE at connection start (PGOPTIONS=-c role=...),
# and one line on stderr says so. A BYPASSRLS role that is no superuser is refused (no safe owner).
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
    from agent_state.schema import SchemaError, prepare_owner
    try:
        with psycopg.connect(sys.argv[1], autocommit=True) as conn:
            role, note = prepare_owner(conn)
    except SchemaError as error:
        print(f"echo {shlex.quote('sqitch.sh: ' + str(error))} >&2; exit 1")
        sys.exit(0)
    if role:
        options = " ".join(filter(None, [conninfo_to_dict(sys.argv[1]).get("options"), f"-c role={role}"]))
        print(f"export PGOPTIONS={shlex.quote(str(options))}")
        print(f"echo {shlex.quote('sqitch.sh: ' + str(note))} >&2")
PY
)"
exec sqitch "$@" db:pg:
