#!/usr/bin/env bash
# Claim + complete throughput, base schema against this tree's, paired and interleaved (issue 20
# item 5: the claim indexes without the lease expiry must not slow a claim). Each round fills
# N due jobs and runs bench/queue/claim_complete.sql N times on one connection; RUNNING jobs of
# the queue are held IN_PROGRESS (long leases) meanwhile, which the expired-lease probe of the new
# claim reads through agent_jobs_in_progress.
# Usage: bench/ab/claim_ab.sh BASE_DB HEAD_DB   (databases of the private cluster, as the superuser;
#        eval "$(make -s env)" first)   N=2000 RUNNING=0 ROUNDS=3
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-2000}; RUNNING=${RUNNING:-0}; ROUNDS=${ROUNDS:-3}
for db in "$1" "$2"; do
  psql -X -q -v ON_ERROR_STOP=1 -d "$db" -f "$HERE/queue/setup.sql" >/dev/null 2>&1
done
hold() {  # RUNNING jobs of queue 'bench' IN_PROGRESS under a one-hour lease
  psql -X -q -d "$1" -c "update ai.agent_jobs set status = 'COMPLETED', finished_at = now(), lease_owner = null, lease_expires_at = null where queue = 'bench' and status = 'IN_PROGRESS'" >/dev/null
  [ "$RUNNING" -gt 0 ] || return 0
  psql -X -q -d "$1" -v n="$RUNNING" -f "$HERE/queue/fill.sql" >/dev/null
  psql -X -q -d "$1" -c "set role bench_worker" -c "select count(*) from ai.claim_jobs('holder', '1 hour', 'bench', $RUNNING)" >/dev/null
}
printf '%-8s %10s %10s\n' round base head
for r in $(seq 1 "$ROUNDS"); do
  line="$r"
  for db in "$1" "$2"; do
    hold "$db"
    psql -X -q -d "$db" -v n="$N" -f "$HERE/queue/fill.sql" >/dev/null
    tps=$(pgbench -n -f "$HERE/queue/claim_complete.sql" -t "$N" "postgresql:///$db?user=bench_worker" 2>/dev/null |
          sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p')
    line="$line $tps"
  done
  printf '%-8s %10s %10s\n' $line
done
