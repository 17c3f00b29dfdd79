-- Revert agent-state:job_keys from pg

begin;

select pg_catalog.set_config('lock_timeout', '5s', true) where pg_catalog.current_setting('lock_timeout') = '0';

drop type ai.job_key_status_row;
drop table ai.job_keys;
drop table ai.queue_clocks;
drop index ai.agent_jobs_claim_fair;
drop index ai.agent_jobs_claim_scheduled;
drop index ai.agent_jobs_key_pending;
drop index ai.agent_jobs_in_flight;
alter table ai.agent_jobs drop column key, drop column vtime;
alter table ai.agent_jobs_archive drop column key, drop column vtime;
alter table ai_archive.agent_jobs drop column key, drop column vtime;
alter table ai_archive.agent_jobs_archive drop column key, drop column vtime;
create index if not exists agent_jobs_claim_pending on ai.agent_jobs (queue, priority desc, run_at, job_id)
  where status = 'PENDING';
create index if not exists agent_jobs_in_progress on ai.agent_jobs (queue)
  where status = 'IN_PROGRESS';

commit;
