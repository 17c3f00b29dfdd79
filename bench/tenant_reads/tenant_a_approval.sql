-- One pending approval of tenant A, by the worker that claimed its job (bench/tenant_reads.sh).
select ai.request_human(j.job_id, j.fencing_token, 'c3') from ai.claim_jobs('bench', '1 hour', 'tenant-reads-a', 1) j;
