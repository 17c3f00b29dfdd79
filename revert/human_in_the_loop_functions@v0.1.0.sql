-- Revert agent-state:human_in_the_loop_functions from pg

begin;

drop function ai.get_approval(text);
drop function ai.pending_approvals(text, integer);
drop function ai.resolve_human(text, text, jsonb);
drop function ai._close_approval_of_job(bigint, text);
drop function ai.request_human(bigint, bigint, text, jsonb);

commit;
