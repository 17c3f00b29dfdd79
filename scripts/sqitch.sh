#!/usr/bin/env bash
# sqitch against a libpq URL: `scripts/sqitch.sh URL deploy --verify`.
# Sqitch's pg engine talks to the registry through DBD::Pg and runs scripts with psql; both
# honour the PG* environment, which is how the URL's parts (a socket directory in ?host=, a
# password) reach them. The target is then plain db:pg:.
set -euo pipefail
cd "$(dirname "$0")/.."
url=$1; shift
eval "$(.venv/bin/python - "$url" <<'PY'
import shlex, sys
from psycopg.conninfo import conninfo_to_dict
names = {"host": "PGHOST", "port": "PGPORT", "user": "PGUSER", "password": "PGPASSWORD",
         "dbname": "PGDATABASE", "sslmode": "PGSSLMODE"}
for key, value in conninfo_to_dict(sys.argv[1]).items():
    if key in names and value is not None:
        print(f"export {names[key]}={shlex.quote(str(value))}")
PY
)"
exec sqitch "$@" db:pg:
