\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/compaction.sql
select ai.record_compaction('c1', 'summary of 1..40', 40, 30);
reset role;
analyze ai.session_messages;
-- A 51-row table is cheapest to scan whole; with that path off, the index that fits is chosen.
set local enable_seqscan = off;

create function pg_temp.plan_of(query text) returns text language plpgsql as $$
declare
  line record;
  plan text := '';
begin
  for line in execute 'explain ' || query loop
    plan := plan || line."QUERY PLAN" || E'\n';
  end loop;
  return plan;
end
$$;

-- The query ai._newest_summary runs: it must use the small partial index, not walk the thread.
select matches(pg_temp.plan_of($$select * from ai.session_messages m where m.thread_id = 'c1' and m.role = 'system'
                                 and m.content ? 'compaction' order by m.seq desc limit 1$$),
               'session_messages_summaries', 'the newest summary is read through session_messages_summaries');
-- The tail is a primary-key range scan.
select matches(pg_temp.plan_of($$select * from ai.session_messages m where m.thread_id = 'c1' and m.seq > 40 order by m.seq$$),
               'session_messages_pkey', 'the tail is a range scan of the primary key');

select * from finish();
rollback;
