-- Verify agent-state:thread_fences on pg

select thread_id, owner, job_id, fencing_token, held, updated_at from ai.thread_fences where false;
select thread_id, owner, job_id, fencing_token, held, updated_at from ai_archive.thread_fences where false;
select 1 / count(*) from ai._archived_tables where table_name = 'thread_fences';
