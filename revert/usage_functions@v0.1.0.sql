-- Revert agent-state:usage_functions from pg

begin;

drop function ai.usage_summary(timestamptz, timestamptz, text[]);
drop function ai.record_usage(text, text, text, bigint, bigint, numeric, jsonb, bigint, bigint);

commit;
