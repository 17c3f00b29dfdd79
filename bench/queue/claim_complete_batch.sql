select array_agg(job_id) as ids, array_agg(fencing_token) as tokens from ai.claim_jobs('bench-worker', '60 seconds', 'bench', 100) \gset
select count(*) from ai.complete_jobs(':ids'::bigint[], ':tokens'::bigint[]);
