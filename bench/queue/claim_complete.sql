select job_id, fencing_token from ai.claim_job('bench-worker', '60 seconds', 'bench') \gset
select 1 from ai.complete_job(:job_id, :fencing_token);
