-- Verify agent-state:job_keys_functions on pg

select 'ai.set_job_key(text, text, double precision, integer, double precision, integer)'::regprocedure;
select 'ai.job_key_status(text, integer, text, text)'::regprocedure;
