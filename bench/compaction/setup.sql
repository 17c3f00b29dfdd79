-- Two threads of bench_tenant, one of 100 messages and one of 100,000, each compacted so that a
-- summary covers all but the last 50: the window to send is the same size for both.
-- Bulk-loaded as the superuser with triggers off (session_replication_role = replica), which is
-- also why last_seq is set by hand here.
set session_replication_role = replica;
do $$
declare
  n integer;
  t text;
begin
  foreach n in array array[100, 100000] loop
    t := 'window-' || n;
    -- (replica mode fires no foreign key actions: delete the children by hand)
    delete from ai.session_messages where thread_id = t;
    delete from ai.session_events where thread_id = t;
    delete from ai.agent_sessions where thread_id = t;
    insert into ai.agent_sessions (thread_id, owner, last_seq) values (t, 'bench_tenant', n + 1);
    insert into ai.session_messages (thread_id, seq, owner, role, content, token_count, idempotency_key)
    select t, i, 'bench_tenant', case when i % 2 = 0 then 'assistant' else 'user' end,
           jsonb_build_object('text', repeat('word ', 40), 'i', i), 50, 'k' || i
    from generate_series(1, n) i;
    insert into ai.session_messages (thread_id, seq, owner, role, content, token_count, idempotency_key)
    values (t, n + 1, 'bench_tenant', 'system',
            jsonb_build_object('compaction', jsonb_build_object('from_seq', 1, 'through_seq', n - 50), 'text', 'summary'),
            200, 'compaction:' || (n - 50));
  end loop;
end
$$;
reset session_replication_role;
analyze ai.session_messages;
analyze ai.agent_sessions;
