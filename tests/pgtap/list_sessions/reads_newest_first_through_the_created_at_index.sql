\ir ../fixtures/helpers.sql
begin;
select plan(2);

create function pg_temp.plan_of(query text) returns text language plpgsql as $$
declare
  line text;
  plan text := '';
begin
  for line in execute 'explain ' || query loop
    plan := plan || line || E'\n';
  end loop;
  return plan;
end
$$;

-- list_sessions' query without an owner, as the function has it: the newest max_rows come off an
-- index in order, not from a sort of every session
set local enable_seqscan = off;
select ok(pg_temp.plan_of($$select s.* from ai.agent_sessions s where (null::text is null or s.status = null)
                            order by s.created_at desc, s.thread_id desc limit 50$$) like '%agent_sessions_created%',
          'read through agent_sessions_created');
select ok(pg_temp.plan_of($$select s.* from ai.agent_sessions s where (null::text is null or s.status = null)
                            order by s.created_at desc, s.thread_id desc limit 50$$) not like '%Sort%',
          'without sorting');

select * from finish();
rollback;
