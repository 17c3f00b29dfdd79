#!/usr/bin/env bash
# What tenant isolation costs on the hot paths (issue 11): the same pgbench scripts against three
# schemas side by side, interleaved, medians of BENCH_REPEATS runs:
#   before   the schema at BASE_REV (functions SECURITY INVOKER, no pinned search_path,
#            tenants with table privileges), deployed by the superuser as it allowed;
#   after    this tree (SECURITY DEFINER as a non-superuser owner, search_path pinned everywhere);
#   no-SET   this tree with every function's SET search_path removed (SECURITY DEFINER kept):
#            the share of the pinned search_path alone.
# Workloads: an append (bench/sessions/append.sql, as a tenant), a read of 20 messages (as a
# tenant), a claim + complete (bench/queue/claim_complete.sql, as a worker); then microseconds
# per call of a few functions in a loop inside one rolled-back transaction, logged in as a tenant
# (no fsync in it, so it is steadier than throughput on a shared machine): the best of the repeats.
# Usage: DATABASE_URL=postgresql:///agent_state bench/security_ab.sh   (a superuser URL)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
url=${DATABASE_URL:?set DATABASE_URL to a superuser URL of the server}
BASE_REV=${BASE_REV:-93ad56d}
REPEATS=${BENCH_REPEATS:-3}
SECONDS_RUN=${BENCH_SECONDS:-5}
LOOPS=${BENCH_QUEUE_SINGLE:-1000}
deploy_user=${AGENT_STATE_DEPLOY_USER:-agent_state_owner}
admin_url="${url%/*}/postgres"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; for v in before after noset; do psql -X -q -d "$admin_url" -c "drop database if exists agent_state_ab_$v with (force)" >/dev/null 2>&1 || true; done' EXIT

git -C "$ROOT" archive "$BASE_REV" | tar -x -C "$tmp"
for v in before after noset; do
  psql -X -q -d "$admin_url" -c "drop database if exists agent_state_ab_$v with (force)" >/dev/null
  owner=$deploy_user; [ $v = before ] && owner=postgres
  psql -X -q -d "$admin_url" -c "create database agent_state_ab_$v owner $owner" >/dev/null
done
(cd "$tmp" && PGDATABASE=agent_state_ab_before sqitch --quiet deploy db:pg: >/dev/null)
"$ROOT/scripts/sqitch.sh" "${url%/*}/agent_state_ab_after?user=$deploy_user" --quiet deploy >/dev/null
"$ROOT/scripts/sqitch.sh" "${url%/*}/agent_state_ab_noset?user=$deploy_user" --quiet deploy >/dev/null
psql -X -q -d "${url%/*}/agent_state_ab_noset?user=$deploy_user" -c "
  do \$\$ declare f regprocedure; begin
    for f in select oid::regprocedure from pg_proc where pronamespace = 'ai'::regnamespace and prokind = 'f'
                and proconfig is not null loop
      execute format('alter function %s reset search_path', f);
    end loop; end \$\$" >/dev/null

prefix="ab-"
for v in before after noset; do
  u="${url%/*}/agent_state_ab_$v"
  psql -X -q -v ON_ERROR_STOP=1 -v prefix="$prefix" -d "$u" -f "$HERE/sessions/setup.sql" >/dev/null 2>&1
  psql -X -q -v ON_ERROR_STOP=1 -d "$u" -f "$HERE/queue/setup.sql" >/dev/null 2>&1
  psql -X -q -d "$u" -c "set role bench_tenant" \
    -c "select ai.append_message_idempotent('${prefix}' || t, 'user', to_jsonb(i)) from generate_series(1, 64) t, generate_series(1, 20) i" >/dev/null
done
cat > "$tmp/read.sql" <<'SQL'
\set t random(1, 64)
select count(*) from ai.get_messages(':prefix' || :t, 0, 20);
SQL

run() {  # variant workload -> tps of one run
  local v=$1 w=$2 u="${url%/*}/agent_state_ab_$1"
  case $w in
    append) pgbench -n -f "$HERE/sessions/append.sql" -T "$SECONDS_RUN" -D prefix="$prefix" "$u?user=bench_tenant" 2>/dev/null ;;
    read) pgbench -n -f "$tmp/read.sql" -T "$SECONDS_RUN" -D prefix="$prefix" "$u?user=bench_tenant" 2>/dev/null ;;
    claim)
      psql -X -q -v ON_ERROR_STOP=1 -v n="$LOOPS" -d "$u" -f "$HERE/queue/fill.sql" >/dev/null
      pgbench -n -f "$HERE/queue/claim_complete.sql" -t "$LOOPS" "$u?user=bench_worker" 2>/dev/null ;;
  esac | sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf '%-34s %10s %10s %10s %9s %9s\n' "1 client, median of $REPEATS" before after no-SET after/b no-SET/b
for w in append read claim; do
  for v in before after noset; do : > "$tmp/$w.$v"; done
  for _ in $(seq "$REPEATS"); do
    for v in before after noset; do run $v $w >> "$tmp/$w.$v"; done
  done
  b=$(median < "$tmp/$w.before"); a=$(median < "$tmp/$w.after"); n=$(median < "$tmp/$w.noset")
  printf '%-34s %10.0f %10.0f %10.0f %8.2fx %8.2fx\n' "$w (tps)" "$b" "$a" "$n" \
    "$(awk -v x="$a" -v y="$b" 'BEGIN {print x / y}')" "$(awk -v x="$n" -v y="$b" 'BEGIN {print x / y}')"
done

calls() {  # variant -> "name us" lines: microseconds per call, in a loop of N in one transaction
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
                                                array['m'], array[i::text], array['json'], array['\x02'::bytea]); end loop;
  insert into t values ('ai.put_checkpoint', extract(epoch from clock_timestamp() - s) * 1e6 / $n);
  s := clock_timestamp();
  for i in 1..$n loop perform ai.enqueue_job('ab-calls', '{}', 'ab'); end loop;
  insert into t values ('ai.enqueue_job', extract(epoch from clock_timestamp() - s) * 1e6 / $n);
end \$\$;
select name, round(us, 1) from t;
rollback;
SQL
}
for _ in $(seq "$REPEATS"); do for v in before after noset; do calls $v | sed "s/^/$v|/" >> "$tmp/calls"; done; done
printf '\n%-34s %10s %10s %10s %9s %9s\n' "us per call, best of $REPEATS" before after no-SET after/b no-SET/b
for name in 'ai.now()' ai.get_session 'ai.get_messages (20 rows)' ai.append_message_idempotent ai.put_checkpoint ai.enqueue_job; do
  best() { awk -F'|' -v v="$1" -v n="$name" '$1 == v && $2 == n {print $3}' "$tmp/calls" | sort -n | head -1; }
  b=$(best before); a=$(best after); n=$(best noset)
  printf '%-34s %10.1f %10.1f %10.1f %8.2fx %8.2fx\n' "$name" "$b" "$a" "$n" \
    "$(awk -v x="$a" -v y="$b" 'BEGIN {print x / y}')" "$(awk -v x="$n" -v y="$b" 'BEGIN {print x / y}')"
done
