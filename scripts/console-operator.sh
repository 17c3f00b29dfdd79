#!/usr/bin/env bash
# `make console` on the private cluster: the login role console_operator (a member of ai_service)
# with a password, and a pg_hba.conf line that makes the server ask it for that password.
#
# The console's database-credentials login takes only a server that asks for the typed password
# (require_auth, docs/console.md), and the private cluster trusts its own socket: the line
# `local all console_operator scram-sha-256`, put first, makes the socket ask this role (and no
# other: the tests' roles keep their trust). The password is made once, kept in
# .pgdata/console_operator.password (mode 600), and printed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
DATA=$ROOT/.pgdata/data
HBA=$DATA/pg_hba.conf
FILE=$ROOT/.pgdata/console_operator.password
LINE='local all console_operator scram-sha-256'

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

if [ ! -s "$FILE" ]; then
  (umask 077 && python3 -c 'import secrets; print(secrets.token_urlsafe(18))' >"$FILE")
fi
PASSWORD=$(cat "$FILE")
psql -X -q -v ON_ERROR_STOP=1 -d postgres -v pw="$PASSWORD" <<'SQL' >/dev/null
set client_min_messages = warning;
select not exists (select from pg_roles where rolname = 'console_operator') as missing \gset
\if :missing
  create role console_operator login;
\endif
grant ai_service to console_operator;
alter role console_operator password :'pw';
SQL
if ! as_owner grep -qxF "$LINE" "$HBA"; then
  as_owner sh -c "{ echo '# make console: console_operator logs in with its password (scripts/console-operator.sh)'; echo '$LINE'; cat '$HBA'; } >'$HBA.new' && cat '$HBA.new' >'$HBA' && rm '$HBA.new'"
  psql -X -q -d postgres -c 'select pg_reload_conf()' >/dev/null
fi
echo "log in as console_operator with the password $PASSWORD (an operator: sees every run)."
echo "A tenant's role logs in once it has a password and a pg_hba.conf line that asks for it (docs/console.md)."
