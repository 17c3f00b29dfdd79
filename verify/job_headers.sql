-- Verify agent-state:job_headers on pg

select headers from ai.agent_jobs where false;
select headers from ai.agent_jobs_archive where false;
select headers from ai_archive.agent_jobs where false;
select headers from ai_archive.agent_jobs_archive where false;
