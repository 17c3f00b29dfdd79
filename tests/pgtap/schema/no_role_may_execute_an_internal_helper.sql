\ir ../fixtures/helpers.sql
begin;
select plan(1);

-- The API is the ai.verb_noun set; ai._* helpers run inside the schema owner's functions only.
select is_empty($$
  select format('%s may execute %s', r, p.oid::regprocedure)
  from pg_proc p, unnest(array['ai_user', 'ai_service', 'public']) r
  where p.pronamespace = 'ai'::regnamespace and p.proname like '\_%'
    and has_function_privilege(r, p.oid, 'EXECUTE')$$,
  'no EXECUTE on an ai._* function for ai_user, ai_service or PUBLIC');

select * from finish();
rollback;
