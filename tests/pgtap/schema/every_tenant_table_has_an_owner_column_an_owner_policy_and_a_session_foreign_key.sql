\ir ../fixtures/helpers.sql
begin;
select plan(3);

-- Tenant tables: every table in ai with a thread_id column.
create temp view tenant_tables as
  select c.oid, c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where n.nspname = 'ai' and c.relkind in ('r', 'p')
    and exists (select from pg_attribute a where a.attrelid = c.oid and a.attname = 'thread_id' and not a.attisdropped);

select is_empty($$select relname from tenant_tables t where not exists (
    select from pg_attribute a where a.attrelid = t.oid and a.attname = 'owner' and a.attnotnull and not a.attisdropped)$$,
  'every tenant table has owner text not null');
select is_empty($$select relname from tenant_tables t where not exists (
    select from pg_policy p where p.polrelid = t.oid and p.polcmd = '*'
      and pg_get_expr(p.polqual, p.polrelid) like '%current_owner()%'
      and pg_get_expr(p.polwithcheck, p.polrelid) like '%current_owner()%')$$,
  'every tenant table has a policy for all commands using and checking ai.current_owner()');
-- ai.deleted_threads (checkpoints change) is the one exception: a tombstone outlives its session.
select is_empty($$select relname from tenant_tables t where t.relname not in ('agent_sessions', 'deleted_threads') and not exists (
    select from pg_constraint k where k.conrelid = t.oid and k.contype = 'f'
      and k.confrelid = 'ai.agent_sessions'::regclass and k.confdeltype = 'c'
      and (select array_agg(attname::text order by attname) from pg_attribute
           where attrelid = t.oid and attnum = any (k.conkey)) = array['owner', 'thread_id'])$$,
  'every child table references ai.agent_sessions (thread_id, owner) on delete cascade');

select * from finish();
rollback;
