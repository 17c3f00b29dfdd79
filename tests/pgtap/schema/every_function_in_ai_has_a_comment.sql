\ir ../fixtures/helpers.sql
begin;
select plan(1);

select is_empty($$
  select p.oid::regprocedure::text from pg_proc p join pg_namespace n on n.oid = p.pronamespace
  where n.nspname = 'ai' and coalesce(btrim(obj_description(p.oid, 'pg_proc')), '') = ''$$,
  'every function in schema ai has a COMMENT');

select * from finish();
rollback;
