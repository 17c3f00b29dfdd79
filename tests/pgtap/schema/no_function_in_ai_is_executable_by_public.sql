\ir ../fixtures/helpers.sql
begin;
select plan(1);

select is_empty($$
  select p.oid::regprocedure::text from pg_proc p join pg_namespace n on n.oid = p.pronamespace,
       aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
  where n.nspname = 'ai' and a.grantee = 0 and a.privilege_type = 'EXECUTE'$$,
  'EXECUTE is revoked from PUBLIC on every function in schema ai');

select * from finish();
rollback;
