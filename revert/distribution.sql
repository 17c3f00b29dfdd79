-- Revert agent-state:distribution from pg
-- (On a formation this does not undistribute the tables: undistribute_table() each first.)

begin;

drop function ai.distribute();
-- (the trigger exists on a formation only: ai.distribute() made it)
drop trigger if exists agent_jobs_thread_fence on ai.agent_jobs;
drop function ai._thread_fence_moved();
drop function ai._fence_on_formation(text, bigint, bigint);
drop function ai._formation_carry();
drop function ai._formation_delegated_clock();
drop function ai._formation_caller(name);
drop function ai._formation_secret();
drop function ai._formation_mac(text, text);
drop table ai.formation_secret;
delete from ai.error_codes where sqlstate = 'AS070';
delete from ai.error_codes where sqlstate = 'AS071';

commit;
