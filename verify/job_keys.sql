-- Verify agent-state:job_keys on pg

select key, vtime from ai.agent_jobs where false;
select key, vtime from ai.agent_jobs_archive where false;
select key, vtime from ai_archive.agent_jobs where false;
select key, vtime from ai_archive.agent_jobs_archive where false;
select queue, key, weight, max_in_flight, rate_per_minute, burst, tokens, refilled_at, updated_at from ai.job_keys where false;
select 'ai.agent_jobs_claim_fair'::regclass, 'ai.agent_jobs_claim_scheduled'::regclass,
       'ai.agent_jobs_key_pending'::regclass, 'ai.agent_jobs_in_flight'::regclass;
select queue, vtime from ai.queue_clocks where false;
