-- Variant of bench/schema_ab.sh: complete_job and complete_jobs without the attempt entry they
-- write in their SET list (the attempt history's cost on the hot path; claims set claimed_at in
-- either variant, and the trigger that logs other endings does not fire on claim or complete).
do $$
declare f regprocedure; def text; lean text;
begin
  for f in select oid::regprocedure from pg_proc
            where pronamespace = 'ai'::regnamespace and proname in ('complete_job', 'complete_jobs') loop
    def := pg_get_functiondef(f);
    lean := regexp_replace(def, ',\s*attempt_log = \w+\.attempt_log operator\(pg_catalog\.\|\|\) ai\._attempt_entry\(.*?''completed'', null\)', '', 'g');
    if lean = def then
      raise exception 'no attempt entry found in %', f;
    end if;
    execute lean;
  end loop;
end $$;
