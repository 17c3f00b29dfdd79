-- Verify agent-state:usage_functions on pg

begin;

select 'ai.record_usage(text, text, text, bigint, bigint, numeric, jsonb, bigint, bigint)'::regprocedure;
select 'ai.usage_summary(timestamptz, timestamptz, text[])'::regprocedure;

rollback;
