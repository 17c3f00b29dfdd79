-- Revert agent-state:operator_reads_functions from pg

begin;

drop function ai.archive_backlog(interval, interval);
drop function ai.checkpoint_tree(text, text, integer);
drop function ai.session_timeline(text, integer);
drop function ai.list_jobs(text, text, text, integer);
drop function ai.list_sessions(text, text, integer);

commit;
