\ir ../fixtures/helpers.sql
begin;
select plan(2);

-- Tenants and services reach the tables only through the functions (SECURITY DEFINER): a
-- privilege on a table would let them EXPLAIN ANALYZE around RLS or LOCK it against everyone.
select is_empty($$
  select format('%s: %s on %s', r, priv, c.oid::regclass)
  from pg_class c, unnest(array['ai_user', 'ai_service', 'public']) r,
       unnest(array['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER']) priv
  where c.relnamespace in ('ai'::regnamespace, 'ai_archive'::regnamespace) and c.relkind in ('r', 'p', 'v', 'm', 'S')
    and has_table_privilege(r, c.oid, priv)$$,
  'no table privilege for ai_user, ai_service or PUBLIC');
select is_empty($$
  select format('%s: %s on %s.%s', r, priv, a.attrelid::regclass, a.attname)
  from pg_attribute a join pg_class c on c.oid = a.attrelid,
       unnest(array['ai_user', 'ai_service']) r, unnest(array['SELECT', 'INSERT', 'UPDATE', 'REFERENCES']) priv
  where c.relnamespace in ('ai'::regnamespace, 'ai_archive'::regnamespace) and a.attnum > 0 and not a.attisdropped
    and has_column_privilege(r, a.attrelid, a.attnum, priv)$$,
  'and no column privilege');

select * from finish();
rollback;
