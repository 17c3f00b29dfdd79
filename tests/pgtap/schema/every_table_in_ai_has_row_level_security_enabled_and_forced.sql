\ir ../fixtures/helpers.sql
begin;
select plan(2);

-- A catalog check over every table, so tables added by later changes are covered too.
select is_empty($$
  select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where n.nspname = 'ai' and c.relkind in ('r', 'p') and not (c.relrowsecurity and c.relforcerowsecurity)$$,
  'every table in schema ai has RLS enabled and forced');
select is_empty($$
  select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where n.nspname = 'ai' and c.relkind in ('r', 'p')
    and not exists (select from pg_policy p where p.polrelid = c.oid)$$,
  'every table in schema ai has at least one policy');

select * from finish();
rollback;
