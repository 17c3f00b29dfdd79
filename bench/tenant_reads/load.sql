-- Tenant B's :n rows (bench/tenant_reads.sh): :n jobs and :n checkpoints over :n / 10 sessions,
-- :n / 10 eval runs and :n / 10 pending approvals. Bulk-loaded as a superuser in the bench's own
-- database (the functions would take minutes); every row is one the functions could have written.
set session_replication_role = replica;  -- the row triggers are the functions' business, not the load's
insert into ai.agent_sessions (thread_id, owner, status, created_at, updated_at)
select 'b-' || i, 'bench_tenant_b', 'active', now() - interval '1 day' + i * interval '1 ms', now()
from generate_series(1, greatest(:n / 10, 1)) i;
insert into ai.agent_jobs (thread_id, owner, queue, run_at, created_at, updated_at)
select 'b-' || (i % greatest(:n / 10, 1) + 1), 'bench_tenant_b', 'tenant-reads', now() + interval '10 years', now(), now()
from generate_series(1, :n) i;
insert into ai.checkpoints (thread_id, checkpoint_ns, checkpoint_id, owner, type, checkpoint, metadata, created_at)
select 'b-' || (i % greatest(:n / 10, 1) + 1), '', 'c' || lpad(i::text, 9, '0'), 'bench_tenant_b', 'json', '\x7b7d',
       '{"source": "loop"}', now() - interval '1 day'
from generate_series(1, :n) i;
insert into ai.eval_runs (thread_id, owner, candidate, passed, created_at)
select 'b-' || (i % greatest(:n / 10, 1) + 1), 'bench_tenant_b', 'candidate', true, now()
from generate_series(1, greatest(:n / 10, 1)) i;
insert into ai.human_approvals (thread_id, owner, job_id, checkpoint_id, status, requested_at)
select 'b-' || i, 'bench_tenant_b', i, 'c1', 'pending', now() - interval '1 hour'
from generate_series(1, greatest(:n / 10, 1)) i;
reset session_replication_role;
vacuum analyze ai.agent_sessions, ai.agent_jobs, ai.checkpoints, ai.eval_runs, ai.human_approvals;
