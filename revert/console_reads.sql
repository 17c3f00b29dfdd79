-- Revert agent-state:console_reads from pg

begin;

drop function ai.queue_throughput(text, interval, interval);

commit;
