-- Verify agent-state:console_reads on pg

begin;

select 'ai.queue_throughput(text, interval, interval)'::regprocedure;

rollback;
