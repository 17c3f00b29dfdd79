-- Verify agent-state:side_effects on pg
select thread_id, idempotency_key, owner, request, status, result, attempt, takeovers, job_id, fencing_token,
       reserved_until, last_error, created_at, updated_at, finished_at
from ai.side_effects where false;
select thread_id from ai_archive.side_effects where false;
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai.side_effects'::regclass);
select 1 / (select relforcerowsecurity::int from pg_catalog.pg_class where oid = 'ai_archive.side_effects'::regclass);
select 1 / count(*)::int from ai._archived_tables where table_name = 'side_effects';
select 1 / (select (count(*) = 2)::int from ai.error_codes where sqlstate in ('AS030', 'AS031'));
select 'ai._check_side_effect_row(text, text, integer, integer, timestamptz)'::regprocedure;
select 1 / count(*) from pg_catalog.pg_constraint where conname = 'side_effects_row_check' and conrelid = 'ai.side_effects'::regclass;
