-- Variant of bench/schema_ab.sh: every function's SET search_path removed (SECURITY DEFINER kept),
-- the share of the pinned search_path alone.
do $$
declare f regprocedure;
begin
  for f in select oid::regprocedure from pg_proc where pronamespace = 'ai'::regnamespace and prokind = 'f'
              and proconfig is not null loop
    execute format('alter function %s reset search_path', f);
  end loop;
end $$;
