-- Revert agent-state:queue from pg
begin;
drop table ai.job_fences;
drop table ai.notify_key;
drop table ai.agent_jobs_archive;
drop table ai.agent_jobs;
drop function ai._check_job_row(text, text, integer, integer, text, text, timestamptz);
commit;
