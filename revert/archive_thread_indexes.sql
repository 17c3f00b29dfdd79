-- Revert agent-state:archive_thread_indexes from pg
begin;

drop index ai.agent_jobs_thread;
drop index ai_archive.agent_jobs_thread;

commit;
