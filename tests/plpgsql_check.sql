-- Every PL/pgSQL function of the ai schema passes plpgsql_check with no error and no warning.
create extension if not exists plpgsql_check;

do $$
declare
  findings text;
begin
  select string_agg(format('%s: %s %s', p.oid::regprocedure, c.level, c.message), E'\n')
  into findings
  from pg_proc p
  join pg_namespace n on n.oid = p.pronamespace
  join pg_language l on l.oid = p.prolang
  -- a trigger function is checked against the table of its trigger
  cross join lateral plpgsql_check_function_tb(
    p.oid, relid => coalesce((select t.tgrelid from pg_trigger t where t.tgfoid = p.oid limit 1), 0),
    extra_warnings => true, other_warnings => true) c
  where n.nspname = 'ai' and l.lanname = 'plpgsql';
  if findings is not null then
    raise exception E'plpgsql_check findings:\n%', findings;
  end if;
  raise notice 'plpgsql_check: % PL/pgSQL functions in schema ai, no findings',
    (select count(*) from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     join pg_language l on l.oid = p.prolang where n.nspname = 'ai' and l.lanname = 'plpgsql');
end
$$;
