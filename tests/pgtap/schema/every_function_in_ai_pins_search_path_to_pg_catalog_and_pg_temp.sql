\ir ../fixtures/helpers.sql
begin;
select plan(1);

-- A function that resolves names through the caller's search_path runs whatever a caller planted
-- earlier on it (an operator in a writable public, say). Every function pins its own. The one
-- exception is a procedure that commits between batches: Postgres refuses COMMIT in a procedure
-- with a SET clause, so ai.archive_all_sessions qualifies every name and operator instead.
select is_empty($$
  select p.oid::regprocedure::text from pg_proc p
  where p.pronamespace = 'ai'::regnamespace
    and p.oid <> 'ai.archive_all_sessions(interval, integer)'::regprocedure
    and not (coalesce(p.proconfig, '{}') @> array['search_path=pg_catalog, pg_temp'])$$,
  'every function in schema ai sets search_path = pg_catalog, pg_temp');

select * from finish();
rollback;
