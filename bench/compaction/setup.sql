-- Two threads of bench_tenant (run as it), one of 100 messages and one of :long (100,000 by
-- default), each compacted so that a summary covers all but the last 50: the window to send is
-- the same size for both. Appended through the functions, as a tenant would (no superuser).
select set_config('bench.long', :'long', false);  -- (psql does not expand :long inside $$)
do $$
declare
  n integer;
  t text;
begin
  foreach n in array array[100, current_setting('bench.long')::integer] loop
    t := 'window-' || n;
    perform ai.create_session(t);
    perform ai.append_message_idempotent(t, case when i % 2 = 0 then 'assistant' else 'user' end,
                                         jsonb_build_object('text', repeat('word ', 40), 'i', i), null, 'k' || i, 50)
    from generate_series(1, n) i;
    perform ai.record_compaction(t, 'summary', n - 50, 200);
  end loop;
end
$$;
