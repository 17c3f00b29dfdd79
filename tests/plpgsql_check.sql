-- Every PL/pgSQL function of the ai schema passes plpgsql_check with no error and no warning.
-- Trigger functions are checked against each table whose trigger calls them.
create extension if not exists plpgsql_check;

do $$
declare
  findings text;
  checked integer;
begin
  with targets as (
    select p.oid as fn, 0::oid as rel
    from pg_proc p
    join pg_namespace n on n.oid = p.pronamespace
    join pg_language l on l.oid = p.prolang
    where n.nspname = 'ai' and l.lanname = 'plpgsql' and p.prorettype <> 'trigger'::regtype
    union
    select t.tgfoid, t.tgrelid
    from pg_trigger t
    join pg_proc p on p.oid = t.tgfoid
    join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'ai' and not t.tgisinternal
    union
    -- the triggers ai.distribute() adds on a Citus formation only (deploy/distribution.sql)
    select 'ai._thread_fence_moved()'::regprocedure, 'ai.agent_jobs'::regclass
    union
    select 'ai._formation_two_phase()'::regprocedure, 'ai.agent_jobs'::regclass
  )
  select string_agg(format('%s: %s %s', t.fn::regprocedure, c.level, c.message), E'\n') filter (where c.level is not null),
         count(distinct t.fn)
  into findings, checked
  from targets t
  left join lateral plpgsql_check_function_tb(t.fn, t.rel, extra_warnings => true, other_warnings => true) c on true;
  if findings is not null then
    raise exception E'plpgsql_check findings:\n%', findings;
  end if;
  if exists (select from pg_proc p join pg_namespace n on n.oid = p.pronamespace
             where n.nspname = 'ai' and p.prorettype = 'trigger'::regtype
               and not exists (select from pg_trigger t where t.tgfoid = p.oid)
               and p.oid <> all (array['ai._thread_fence_moved()'::regprocedure, 'ai._formation_two_phase()'::regprocedure])) then
    raise exception 'a trigger function of schema ai is attached to no table, so it was not checked';
  end if;
  raise notice 'plpgsql_check: % PL/pgSQL functions in schema ai, no findings', checked;
end
$$;
