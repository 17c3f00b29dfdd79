-- Revert agent-state:enqueue_jobs from pg

begin;

drop function ai.enqueue_jobs(text[], jsonb[], text, timestamptz[], integer[], text[], integer, interval[], timestamptz[], timestamptz[], text[], jsonb);

commit;
