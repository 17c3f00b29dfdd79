-- Revert agent-state:job_keys_functions from pg

begin;

drop function ai.set_job_key(text, text, double precision, integer, double precision, integer);
drop function ai.job_key_status(text, integer, text, text);

commit;
