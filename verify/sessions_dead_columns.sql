-- Verify agent-state:sessions_dead_columns on pg
-- the columns are gone from the table and its twin, and the row check takes no last_seq
select 1 / (count(*) = 0)::int
from pg_catalog.pg_attribute a
where a.attrelid in ('ai.agent_sessions'::pg_catalog.regclass, 'ai_archive.agent_sessions'::pg_catalog.regclass)
  and a.attname in ('last_seq', 'current_checkpoint_id') and not a.attisdropped;
select 1 / (pg_catalog.to_regprocedure('ai._check_session_row(text, text, jsonb, timestamptz)') is not null
            and pg_catalog.to_regprocedure('ai._check_session_row(text, text, jsonb, bigint, timestamptz)') is null)::int;
