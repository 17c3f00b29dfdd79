-- Revert agent-state:console_reads from pg

begin;

drop function ai.list_forks(text, integer, text);
drop function ai.list_streams(text, interval, integer, text);
drop function ai.session_status_counts(text);
drop function ai.queue_throughput(text, interval, interval);

commit;
