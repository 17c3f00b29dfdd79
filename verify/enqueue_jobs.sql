-- Verify agent-state:enqueue_jobs on pg

begin;

select 'ai.enqueue_jobs(text[], jsonb[], text, timestamptz[], integer[], text[], integer, interval[], timestamptz[], timestamptz[], text[], jsonb)'::regprocedure;

rollback;
