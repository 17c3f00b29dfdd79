#!/usr/bin/env bash
# Two schemas side by side on the hot paths, interleaved, medians of BENCH_REPEATS runs:
#   base     the schema at BASE_REV, deployed by BASE_DEPLOY_USER (the schema owner; a revision
#            from before tenant isolation was deployed by a superuser: BASE_DEPLOY_USER=postgres);
#   head     this tree, deployed by the schema owner;
#   variant  (VARIANT_SQL=file only) this tree with that SQL file run after the deploy, as the
#            schema owner, labelled VARIANT_LABEL: an ablation of one layer (bench/ab/*.sql).
# Workloads: an append (bench/sessions/append.sql) and a read of 20 messages as a tenant, a
# checkpoint put as a tenant, a claim + complete (bench/queue/claim_complete.sql) as a worker; then
# microseconds per call of a few functions in a loop inside one rolled-back transaction, logged in
# as a tenant (no fsync in it, so steadier than throughput on a shared machine): best of the repeats.
# Usage: DATABASE_URL=postgresql:///agent_state BASE_REV=<rev> bench/schema_ab.sh   (a role with
# CREATEDB and CREATEROLE, bench/common.bash; a superuser when BASE_DEPLOY_USER is another role).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
url=${DATABASE_URL:?set DATABASE_URL (bench/common.bash)}
BASE_REV=${BASE_REV:?set BASE_REV to the revision to compare with}
REPEATS=${BENCH_REPEATS:-3}
SECONDS_RUN=${BENCH_SECONDS:-5}
LOOPS=${BENCH_QUEUE_SINGLE:-1000}
variants="base head"
label=${VARIANT_LABEL:-variant}
[ -n "${VARIANT_SQL:-}" ] && variants="base head variant"
[[ "$url" == *\?* ]] && { echo "schema_ab: DATABASE_URL with parameters is not supported" >&2; exit 2; }
. "$HERE/common.bash"
bench_init agent_state_ab_head  # the checks of bench/common.bash (CREATEDB and CREATEROLE, the deploy user)
base_user=${BASE_DEPLOY_USER:-$deploy_user}
[ "$base_user" = "$deploy_user" ] || [ "$bench_super" = 1 ] || {
  echo "schema_ab: BASE_DEPLOY_USER=$base_user deploys the base: that needs a superuser DATABASE_URL" >&2; exit 2; }
admin_url=$url
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; for v in base head variant; do psql -X -q -d "$admin_url" -c "drop database if exists agent_state_ab_$v with (force)" >/dev/null 2>&1 || true; done' EXIT

git -C "$ROOT" archive "$BASE_REV" | tar -x -C "$tmp"
for v in $variants; do
  psql -X -q -d "$admin_url" -c "drop database if exists agent_state_ab_$v with (force)" >/dev/null 2>&1
  owner=$deploy_user; [ $v = base ] && owner=$base_user
  psql -X -q -d "$admin_url" -c "create database agent_state_ab_$v owner $owner" >/dev/null
done
(cd "$tmp" && PGUSER=$base_user PGDATABASE=agent_state_ab_base sqitch --quiet deploy db:pg: >/dev/null)
for v in $variants; do
  [ $v = base ] && continue
  "$ROOT/scripts/sqitch.sh" "${url%/*}/agent_state_ab_$v?user=$deploy_user" --quiet deploy >/dev/null
done
if [ -n "${VARIANT_SQL:-}" ]; then
  psql -X -q -v ON_ERROR_STOP=1 -d "${url%/*}/agent_state_ab_variant?user=$deploy_user" -f "$VARIANT_SQL" >/dev/null
fi

prefix="ab-"
for v in $variants; do
  u="${url%/*}/agent_state_ab_$v"
  psql -X -q -v ON_ERROR_STOP=1 -d "$u" -f "$HERE/sessions/setup.sql" >/dev/null
  psql -X -q -v ON_ERROR_STOP=1 -v prefix="$prefix" -d "$u?user=bench_tenant" -f "$HERE/sessions/sessions.sql" >/dev/null
  psql -X -q -v ON_ERROR_STOP=1 -d "$u" -f "$HERE/queue/setup.sql" >/dev/null
  psql -X -q -v ON_ERROR_STOP=1 -d "$u?user=bench_worker" -f "$HERE/queue/sessions.sql" >/dev/null
  psql -X -q -d "$u?user=bench_tenant" \
    -c "select ai.append_message_idempotent('${prefix}' || t, 'user', to_jsonb(i)) from generate_series(1, 64) t, generate_series(1, 20) i" >/dev/null
done
cat > "$tmp/read.sql" <<'SQL'
\set t random(1, 64)
select count(*) from ai.get_messages(':prefix' || :t, 0, 20);
SQL
# One graph step: a checkpoint with one new channel value, as LangGraph's saver writes it.
cat > "$tmp/put.sql" <<'SQL'
\set t random(1, 64)
\set r random(1, 1000000000)
select ai.put_checkpoint(':prefix' || :t, '', 'c' || :r, null, 'json', '\x0102', '{"step": 1}', '{"m": "1"}',
                         row(array['m'], array[:r::text], array['json'], array['\x02'::bytea], null)::ai.checkpoint_values);
SQL

run() {  # variant workload -> tps of one run
  local v=$1 w=$2 u="${url%/*}/agent_state_ab_$1"
  case $w in
    append) pgbench -n -f "$HERE/sessions/append.sql" -T "$SECONDS_RUN" -D prefix="$prefix" "$u?user=bench_tenant" 2>/dev/null ;;
    read) pgbench -n -f "$tmp/read.sql" -T "$SECONDS_RUN" -D prefix="$prefix" "$u?user=bench_tenant" 2>/dev/null ;;
    put) pgbench -n -f "$tmp/put.sql" -T "$SECONDS_RUN" -D prefix="$prefix" "$u?user=bench_tenant" 2>/dev/null ;;
    claim)
      psql -X -q -v ON_ERROR_STOP=1 -v n="$LOOPS" -d "$u" -f "$HERE/queue/fill.sql" >/dev/null
      pgbench -n -f "$HERE/queue/claim_complete.sql" -t "$LOOPS" "$u?user=bench_worker" 2>/dev/null ;;
  esac | sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v x="$1" -v y="$2" 'BEGIN {printf "%.2fx", x / y}'; }

header() {
  printf '%-34s %10s %10s' "$1" base head
  [ -n "${VARIANT_SQL:-}" ] && printf ' %10s' "$label"
  printf ' %9s' head/b
  [ -n "${VARIANT_SQL:-}" ] && printf ' %9s' "$label/h"
  printf '\n'
}
row() {  # label format base head [variant]
  printf "%-34s $2 $2" "$1" "$3" "$4"
  [ -n "${VARIANT_SQL:-}" ] && printf " $2" "$5"
  printf ' %9s' "$(ratio "$4" "$3")"
  [ -n "${VARIANT_SQL:-}" ] && printf ' %9s' "$(ratio "$5" "$4")"
  printf '\n'
}

header "1 client, median of $REPEATS"
for w in append read put claim; do
  for v in $variants; do : > "$tmp/$w.$v"; done
  for _ in $(seq "$REPEATS"); do
    for v in $variants; do run $v $w >> "$tmp/$w.$v"; done
  done
  row "$w (tps)" '%10.0f' $(for v in $variants; do median < "$tmp/$w.$v"; done)
done

calls() {  # variant -> "name|us" lines: microseconds per call, in a loop of N in one transaction
  local u="${url%/*}/agent_state_ab_$1?user=bench_tenant" n=2000
  psql -X -q -At -d "$u" <<SQL 2>/dev/null
begin;
select ai.create_session('ab-calls');
select ai.append_message_idempotent('ab-calls', 'user', to_jsonb(i)) from generate_series(1, 20) i;
create temp table t (name text, us numeric);
do \$\$
declare s timestamptz; x record;
begin
  s := clock_timestamp();
  for i in 1..$n loop perform ai.now(); end loop;
  insert into t values ('ai.now()', extract(epoch from clock_timestamp() - s) * 1e6 / $n);
  s := clock_timestamp();
  for i in 1..$n loop perform ai.get_session('ab-calls'); end loop;
  insert into t values ('ai.get_session', extract(epoch from clock_timestamp() - s) * 1e6 / $n);
  s := clock_timestamp();
  for i in 1..$n loop perform count(*) from ai.get_messages('ab-calls', 0, 20); end loop;
  insert into t values ('ai.get_messages (20 rows)', extract(epoch from clock_timestamp() - s) * 1e6 / $n);
  s := clock_timestamp();
  for i in 1..$n loop perform ai.append_message_idempotent('ab-calls', 'user', to_jsonb(i + 100)); end loop;
  insert into t values ('ai.append_message_idempotent', extract(epoch from clock_timestamp() - s) * 1e6 / $n);
  s := clock_timestamp();
  for i in 1..$n loop perform ai.put_checkpoint('ab-calls', '', 'c' || i, null, 'json', '\x01', '{}', '{"m": "1"}',
                                                row(array['m'], array[i::text], array['json'], array['\x02'::bytea], null)::ai.checkpoint_values); end loop;
  insert into t values ('ai.put_checkpoint', extract(epoch from clock_timestamp() - s) * 1e6 / $n);
  s := clock_timestamp();
  for i in 1..$n loop perform ai.get_checkpoint('ab-calls', '', null); end loop;
  insert into t values ('ai.get_checkpoint (latest)', extract(epoch from clock_timestamp() - s) * 1e6 / $n);
  s := clock_timestamp();
  for i in 1..$n loop perform ai.enqueue_job('ab-calls', '{}', 'ab'); end loop;
  insert into t values ('ai.enqueue_job', extract(epoch from clock_timestamp() - s) * 1e6 / $n);
end \$\$;
select name, round(us, 1) from t;
rollback;
SQL
}
for _ in $(seq "$REPEATS"); do for v in $variants; do calls $v | sed "s/^/$v|/" >> "$tmp/calls"; done; done
printf '\n'
header "us per call, best of $REPEATS"
for name in 'ai.now()' ai.get_session 'ai.get_messages (20 rows)' ai.append_message_idempotent ai.put_checkpoint \
            'ai.get_checkpoint (latest)' ai.enqueue_job; do
  row "$name" '%10.1f' $(for v in $variants; do
    awk -F'|' -v v="$v" -v n="$name" '$1 == v && $2 == n {print $3}' "$tmp/calls" | sort -n | head -1; done)
done
