-- Verify agent-state:console_reads on pg

begin;

select 'ai.queue_throughput(text, interval, interval)'::regprocedure;
select 'ai.session_status_counts(text)'::regprocedure;
select 'ai.list_streams(text, interval, integer, text)'::regprocedure;
select 'ai.list_forks(text, integer, text)'::regprocedure;

rollback;
