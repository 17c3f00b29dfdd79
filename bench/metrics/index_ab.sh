#!/usr/bin/env bash
# What the partial index agent_jobs_troubled (change metrics_indexes) costs the queue's hot path:
# 2,000 jobs claimed (ai.claim_jobs, 100 at a time) and completed (ai.complete_jobs) as the
# service, with the index and without it (dropped in the same rolled-back transaction), paired and
# alternated, ROUNDS pairs; prints the medians and the median of the paired ratios.
# On a test database, as a superuser: bench/metrics/index_ab.sh agent_state_test [ROUNDS]
# (it deletes every job first).
set -euo pipefail
db=${1:?database}; rounds=${2:-21}
sql=$(mktemp); trap 'rm -f "$sql"' EXIT
cat > "$sql" <<'SQL'
\set ON_ERROR_STOP 1
delete from ai.agent_jobs; delete from ai.side_effects;
insert into ai.agent_sessions (thread_id, owner) select 'ab-' || i, 'tenant_a' from generate_series(1, 2000) i on conflict do nothing;
vacuum analyze ai.agent_jobs;
SQL
for _ in $(seq "$rounds"); do for v in with without; do
  drop=""; [ "$v" = without ] && drop="drop index ai.agent_jobs_troubled;"
  cat >> "$sql" <<SQL
begin; $drop
insert into ai.agent_jobs (thread_id, owner, queue, run_at, created_at, updated_at)
select 'ab-' || i, 'tenant_a', 'ab', now() - interval '1 second', now(), now() from generate_series(1, 2000) i;
set local role app_service;
do \$\$ declare t0 timestamptz := clock_timestamp(); n int; ids bigint[]; toks bigint[];
begin
  for n in 1 .. 20 loop
    select array_agg(job_id), array_agg(fencing_token) into ids, toks from ai.claim_jobs('ab-worker', '1 minute', 'ab', 100);
    perform ai.complete_jobs(ids, toks);
  end loop;
  raise notice 'AB $v %', extract(epoch from clock_timestamp() - t0) * 1000;
end \$\$;
reset role;
rollback;
SQL
done; done
psql -X -q -d "$db" -f "$sql" 2>&1 | sed -n 's/.*AB \(with\|without\) \([0-9.]*\).*/\1 \2/p' | python3 -c '
import statistics, sys
d = {}
for line in sys.stdin:
    variant, ms = line.split()
    d.setdefault(variant, []).append(float(ms))
for variant in ("with", "without"):
    print(f"{variant:8} median {statistics.median(d[variant]):8.1f} ms  n {len(d[variant])}")
print("median of paired ratios (with/without):", round(statistics.median(w / o for w, o in zip(d["with"], d["without"])), 3))
'
