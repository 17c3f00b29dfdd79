-- Tenant A's few rows (bench/tenant_reads.sh), written through the functions as bench_tenant_a:
-- 5 sessions with a job, 3 checkpoints, 2 messages and an eval run each. Its pending approval is
-- made by bench_worker (tenant_a_approval.sql).
select ai.create_session('a-' || i), ai.record_eval_run('a-' || i, 'candidate', true),
       (ai.enqueue_job('a-' || i, '{}', 'tenant-reads-a')).job_id
from generate_series(1, 5) i;
select ai.put_checkpoint('a-' || i, '', 'c' || k, null, 'json', '\x7b7d'::bytea, '{"source": "loop"}')
from generate_series(1, 5) i, generate_series(1, 3) k;
select ai.append_message_idempotent('a-' || i, 'user', '"hi"') from generate_series(1, 5) i, generate_series(1, 2) k;
