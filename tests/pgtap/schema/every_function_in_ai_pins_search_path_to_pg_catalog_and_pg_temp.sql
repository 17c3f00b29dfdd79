\ir ../fixtures/helpers.sql
begin;
select plan(3);

-- A function that resolves names through the caller's search_path runs whatever a caller planted
-- earlier on it (an operator in a writable public, say). Every function a role may call pins its
-- own, with three exceptions (docs/security.md, "search_path"):
--   * internal helpers (ai._*): no role but the schema owner may execute them, and they run only
--     inside the owner's pinned functions (and triggers and CHECKs of their writes), whose pinned
--     path they inherit;
--   * the clock and the identity functions and the message defaults, which every call runs (a SET
--     clause costs each call a search-path switch and stops inlining, docs/benchmarks.md): their
--     bodies qualify every name, type and operator instead;
--   * ai.archive_all_sessions and ai.prune_all_idle_threads, procedures that commit between batches
--     (Postgres refuses COMMIT in a procedure with a SET clause); they call only the pinned
--     ai.archive_sessions and ai.prune_idle_threads.
--   * on a Citus formation, a delegated write's SQL wrapper (ai._formation_delegate: the planner
--     inlines it only without a SET clause), whose body qualifies every name and whose body as
--     deployed, ai._delegated_<name>_body, pins it.
select is_empty($$
  select p.oid::regprocedure::text from pg_proc p
  where p.pronamespace = 'ai'::regnamespace and p.proname not like '\_%'
    and p.oid not in ('ai.now()'::regprocedure, 'ai.calling_role()'::regprocedure, 'ai.current_owner()'::regprocedure,
                      'ai.sees_all_owners()'::regprocedure, 'ai.estimate_tokens(jsonb)'::regprocedure,
                      'ai.message_key(text, text, jsonb, integer)'::regprocedure,
                      'ai.archive_all_sessions(interval, integer)'::regprocedure,
                      'ai.prune_all_idle_threads(interval, text, integer, text)'::regprocedure)
    and not (coalesce(p.proconfig, '{}') @> array['search_path=pg_catalog, pg_temp'])
    and not (p.prolang = (select oid from pg_language where lanname = 'sql')
             and exists (select from pg_proc b
                          where b.pronamespace = p.pronamespace and b.proname = '_delegated_' || p.proname || '_body'
                            and b.proargtypes = p.proargtypes
                            and b.proconfig @> array['search_path=pg_catalog, pg_temp']))$$,
  'every other function in schema ai sets search_path = pg_catalog, pg_temp');
select is_empty($$
  select format('%s may execute %s', r, p.oid::regprocedure) from pg_proc p, unnest(array['ai_user', 'ai_service', 'public']) r
  where p.pronamespace = 'ai'::regnamespace and p.proname like '\_%' and p.proconfig is null
    and has_function_privilege(r, p.oid, 'EXECUTE')$$,
  'no role but the owner may execute a helper that does not pin it');
select is_empty($$
  select p.oid::regprocedure::text from pg_proc p
  where p.pronamespace = 'ai'::regnamespace and p.proconfig is null and p.prosecdef$$,
  'and every SECURITY DEFINER function pins it');

select * from finish();
rollback;
