-- Revert agent-state:distribution from pg
-- (On a formation this does not undistribute the tables: undistribute_table() each first.)

begin;

drop function ai.distribute();
drop function ai._formation_rewrites(boolean);
drop function ai._formation_delegate(boolean);
drop function ai._formation_thread_id(text);
drop function ai._formation_delegated_writes();
drop function ai._formation_dry_run(text);
drop function ai._formation_step_is_dry(text);
-- (the trigger exists on a formation only: ai.distribute() made it)
drop trigger if exists agent_jobs_thread_fence on ai.agent_jobs;
drop function ai._thread_fence_moved();
-- (the triggers exist on a formation only: ai.distribute() made them)
drop trigger if exists formation_two_phase on ai.agent_jobs;
drop trigger if exists formation_two_phase on ai.agent_jobs_archive;
drop trigger if exists formation_two_phase on ai.job_fences;
drop trigger if exists formation_two_phase on ai.notify_key;
drop trigger if exists formation_two_phase on ai.queue_workers;
drop trigger if exists formation_two_phase on ai.lease_timelines;
drop trigger if exists formation_two_phase on ai_archive.agent_jobs;
drop trigger if exists formation_two_phase on ai_archive.agent_jobs_archive;
drop function ai._formation_two_phase();
drop table ai.formation_two_phase;
drop function ai._fence_on_formation(text, bigint, bigint);
drop function ai._formation_carry();
drop function ai._formation_delegated_clock();
drop function ai._formation_caller(name);
drop function ai._formation_secret();
drop function ai._formation_mac(text, text);
drop table ai.formation_secret;
delete from ai.error_codes where sqlstate in ('AS070', 'AS071');
delete from ai.error_codes where sqlstate = 'AS072';

commit;
