-- Revert agent-state:job_deadlines from pg
--
-- Drops the deadlines of every job and the queues' defaults: the jobs themselves stay.
begin;

drop table ai.queue_deadlines;
drop index ai.agent_jobs_deadline;
drop index ai.agent_jobs_start_by;
alter table ai_archive.agent_jobs_archive drop column timeout, drop column deadline, drop column start_by;
alter table ai_archive.agent_jobs drop column timeout, drop column deadline, drop column start_by;
alter table ai.agent_jobs_archive drop column timeout, drop column deadline, drop column start_by;
alter table ai.agent_jobs drop column timeout, drop column deadline, drop column start_by;

commit;
