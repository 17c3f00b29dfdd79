-- Revert agent-state:job_headers from pg
--
-- The trace contexts stored with the jobs go: a run of a job enqueued before starts a trace of its
-- own afterwards, nothing else changes.
begin;

alter table ai.agent_jobs drop column headers;
alter table ai.agent_jobs_archive drop column headers;
alter table ai_archive.agent_jobs drop column headers;
alter table ai_archive.agent_jobs_archive drop column headers;

commit;
