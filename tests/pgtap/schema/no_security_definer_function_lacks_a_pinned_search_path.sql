\ir ../fixtures/helpers.sql
begin;
select plan(2);

select is_empty($$
  select p.oid::regprocedure::text from pg_proc p join pg_namespace n on n.oid = p.pronamespace
  where n.nspname = 'ai' and p.prosecdef
    and not exists (select from unnest(p.proconfig) c where c like 'search_path=%')$$,
  'every SECURITY DEFINER function in schema ai sets search_path');
select is_empty($$
  select p.oid::regprocedure::text from pg_proc p join pg_namespace n on n.oid = p.pronamespace,
       unnest(p.proconfig) c
  where n.nspname = 'ai' and p.prosecdef and c like 'search_path=%'
    and (c ~* 'public' or c like '%$user%')$$,
  'and none of them puts public or $user on it');

select * from finish();
rollback;
