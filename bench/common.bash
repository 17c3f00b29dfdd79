# Sourced by the bench scripts (not run on its own): each bench works in a database of its own on
# the server of $DATABASE_URL, created, deployed and dropped here.
#
# DATABASE_URL's role makes the database and the bench's roles (bench_*), so it must be a
# superuser or have CREATEDB and CREATEROLE; the scripts say so in one line otherwise. The schema
# is deployed by $AGENT_STATE_DEPLOY_USER (make exports agent_state_owner for the private
# cluster; a superuser URL without it: agent_state_owner too, created if missing), else by the
# URL's role itself, which then must not have BYPASSRLS (docs/security.md). The bench connects as the roles it creates (URL + user=bench_...): the
# server must let them log in as it lets the URL's role (trust, peer or ~/.pgpass).
#
#   bench_init NAME       checks the above; sets url, admin_url (the URL itself), bench_url
#                         (the database NAME), owner_url (bench_url as the schema owner),
#                         deploy_user, bench_super (1 when the URL's role is a superuser)
#   bench_database        drops and creates database NAME, owned by the deploy user, and drops it
#                         on exit unless $BENCH_KEEP is set; with $BENCH_TEMPLATE (the tests: a
#                         database this revision was deployed into by the same deploy user, which
#                         owns it) a copy of that database, already deployed
#   bench_deploy          sqitch deploy into it as the deploy user (nothing to do after a copy)
#   url_with URL k=v ...  URL with these connection parameters added

export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"  # the fixtures' NOTICEs are noise

url_with() {  # url key=value... -> the url with the parameters appended
  local u=$1 sep='?'
  shift
  [[ "$u" == *\?* ]] && sep='&'
  for kv in "$@"; do u="$u$sep$kv"; sep='&'; done
  printf '%s' "$u"
}

bench_init() {
  bench_name=$1
  url=${DATABASE_URL:?DATABASE_URL is set by make bench (a role that may create databases and roles)}
  admin_url=$url
  local base=${url%%\?*} query=""
  [[ "$url" == *\?* ]] && query="?${url#*\?}"
  bench_url="${base%/*}/$bench_name$query"
  local me super createdb createrole bypass
  IFS='|' read -r me super createdb createrole bypass < <(psql -X -At -d "$admin_url" -c \
    "select current_user, rolsuper, rolcreatedb, rolcreaterole, rolbypassrls from pg_roles where rolname = current_user") \
    || { echo "$bench_name: cannot connect to DATABASE_URL" >&2; exit 2; }
  bench_super=0; [ "$super" = t ] && bench_super=1
  if [ "$super" != t ] && { [ "$createdb" != t ] || [ "$createrole" != t ]; }; then
    echo "$bench_name: the role $me of DATABASE_URL must be a superuser or have CREATEDB and CREATEROLE (it makes the bench's database and roles)" >&2
    exit 2
  fi
  deploy_user=${AGENT_STATE_DEPLOY_USER:-}
  if [ -z "$deploy_user" ]; then
    deploy_user=$me
    [ "$super" = t ] && deploy_user=agent_state_owner  # as make does on the private cluster
  fi
  if [ "$deploy_user" = "$me" ] && { [ "$super" = t ] || [ "$bypass" = t ]; }; then
    echo "$bench_name: $me is a superuser or BYPASSRLS: set AGENT_STATE_DEPLOY_USER to the role without them that deploys the schema (docs/security.md)" >&2
    exit 2
  fi
  if [ "$deploy_user" = "$me" ]; then owner_url=$bench_url; else owner_url=$(url_with "$bench_url" "user=$deploy_user"); fi
}

bench_database() {
  if [ "$deploy_user" != "$(psql -X -At -d "$admin_url" -c 'select current_user')" ]; then
    psql -X -q -v ON_ERROR_STOP=1 -d "$admin_url" >/dev/null <<SQL
do \$\$ begin
  if not exists (select from pg_roles where rolname = '$deploy_user') then create role "$deploy_user" login createrole; end if;
end \$\$;
SQL
  fi
  local template=""
  bench_deployed=""
  if [ -n "${BENCH_TEMPLATE:-}" ] && [ "$(psql -X -At -v ON_ERROR_STOP=1 -v t="$BENCH_TEMPLATE" -d "$admin_url" <<<\
      "select pg_catalog.pg_get_userbyid(datdba) from pg_catalog.pg_database where datname = :'t'")" = "$deploy_user" ]; then
    template=" template \"$BENCH_TEMPLATE\""
    bench_deployed=1
  fi
  psql -X -q -v ON_ERROR_STOP=1 -d "$admin_url" -c "drop database if exists $bench_name with (force)" \
    -c "create database $bench_name$template owner \"$deploy_user\"" >/dev/null
  [ -n "${BENCH_KEEP:-}" ] || trap 'psql -X -q -d "$admin_url" -c "drop database if exists $bench_name with (force)" >/dev/null 2>&1 || true' EXIT
}

bench_deploy() {  # (sqitch's NOTICEs go to stderr)
  [ -z "${bench_deployed:-}" ] || return 0
  "${ROOT:?}/scripts/sqitch.sh" "$owner_url" --quiet deploy >/dev/null
}
