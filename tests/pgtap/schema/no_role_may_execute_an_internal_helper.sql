\ir ../fixtures/helpers.sql
begin;
select plan(1);

-- The API is the ai.verb_noun set; ai._* helpers run inside the schema owner's functions only.
-- On a Citus formation, but for the entries of the delegated writes and the check of their
-- thread_id: each such write is an SQL wrapper that the planner inlines into the caller's
-- statement, which then calls them as the caller (ai._formation_delegate, deploy/distribution.sql).
select is_empty($$
  select format('%s may execute %s', r, p.oid::regprocedure)
  from pg_proc p, unnest(array['ai_user', 'ai_service', 'public']) r
  where p.pronamespace = 'ai'::regnamespace and p.proname like '\_%'
    and has_function_privilege(r, p.oid, 'EXECUTE')
    and not (r <> 'public' and exists (select from pg_extension where extname = 'citus')
             and (p.oid = 'ai._formation_thread_id(text)'::regprocedure
                  or (p.proname like '\_delegated\_%' and p.proname not like '%\_body' and p.proisstrict and p.prosecdef)))$$,
  'no EXECUTE on an ai._* function for ai_user, ai_service or PUBLIC');

select * from finish();
rollback;
