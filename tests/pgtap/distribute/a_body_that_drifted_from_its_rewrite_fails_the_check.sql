\ir ../fixtures/helpers.sql
begin;
select plan(12);

-- Each rewrite of ai._formation_rewrites, shown failing: the deployed body changed a little where
-- the rewrite looks (as a later edit of that function would), the one-server check raises AS002
-- and names the function, rather than letting the one-server shape reach a formation.
-- drifted(): the function redefined with one text replaced, then the dry run, in a
-- subtransaction rolled back; the error it raised, or 'no error'.
set local role agent_state_owner;
create function pg_temp.drifted(fn regprocedure, old text, new text) returns text
language plpgsql as $$
declare
  v_def text := pg_get_functiondef(fn);
begin
  if strpos(v_def, old) = 0 then
    return format('this test is stale: %s has no %L', fn, old);
  end if;
  execute replace(v_def, old, new);
  perform ai._formation_rewrites(dry_run => true);
  return 'no error';
exception when others then
  return sqlstate || ': ' || sqlerrm;
end
$$;

select matches(pg_temp.drifted('ai.claim_job(text, interval, text)',
                               'offset 0 for no key update skip locked)', 'offset 0 for update skip locked)'),
  '^AS002: ai\.distribute\(\): ai\.claim_job\(.*\) locks the thread''s session in a shape it does not know$',
  'claim_job locking the session row another way');
select matches(pg_temp.drifted('ai.claim_jobs(text, interval, text, integer)',
                               'where s.thread_id = c.thread_id', 'where c.thread_id = s.thread_id'),
  '^AS002: ai\.distribute\(\): ai\.claim_jobs\(.*\) locks the thread''s session in a shape it does not know$',
  'claim_jobs naming the thread another way');
select is(pg_temp.drifted('ai._fence(text, bigint, bigint)', '-- The held job and its thread in one probe', '-- the probe'),
  'AS002: ai.distribute(): ai._fence has no probe of the job''s row to put the thread''s fence before',
  'ai._fence without the comment the fence on the shard goes before');
select is(pg_temp.drifted('ai._side_effect_holder_alive(ai.side_effects, timestamptz)',
                          'from ai.agent_jobs j', 'from ai.agent_jobs as j'),
  'AS002: ai.distribute(): ai._side_effect_holder_alive reads ai.agent_jobs in a shape it does not know',
  'the ledger''s holder check reading the job another way');
select is(pg_temp.drifted('ai.append_message_idempotent(text, text, jsonb, integer, text, integer, bigint, bigint)',
                          'on conflict do nothing', 'on conflict  do nothing'),
  'AS002: ai.distribute(): ai.append_message_idempotent writes its message in a shape it does not know',
  'the append''s statement with one space more');
select is(pg_temp.drifted('ai._append_step_messages(text, text, text, jsonb)', 'order by e.ord;', 'order by e.ord asc;'),
  'AS002: ai.distribute(): ai._append_step_messages writes the messages in a shape it does not know',
  'a step''s messages in another order clause');
select is(pg_temp.drifted('ai.get_memory(text[], text, boolean)', 'and i.expires_at > v_now
    returning * into r;', 'and v_now < i.expires_at
    returning * into r;'),
  'AS002: ai.distribute(): ai.get_memory refreshes the ttl in a shape it does not know',
  'the refreshing get comparing the other way round');
select is(pg_temp.drifted('ai.search_memory(text[], jsonb, text, integer, integer, boolean, real[], text)',
                          'from pg_catalog.unnest(v_rows) r
    where i.owner = v_owner', 'from pg_catalog.unnest(v_rows) as r
    where i.owner = v_owner'),
  'AS002: ai.distribute(): ai.search_memory refreshes the ttl in a shape it does not know',
  'the refreshing search naming its rows another way');
select is(pg_temp.drifted('ai._checkpoint_reads(text, text, text, text, jsonb, integer)',
                          E'  order by c.checkpoint_id desc\n', E'  order by c.checkpoint_id desc;\n  select null::ai.checkpoint_tuple where false\n'),
  'AS002: ai.distribute(): ai._checkpoint_reads is not the one SELECT of an SQL function it knows',
  'the checkpoint reads in two statements');
select is(pg_temp.drifted('ai.get_checkpoint(text, text, text)', E' SET plan_cache_mode TO \'force_generic_plan\'\n', ''),
  'AS002: ai.distribute(): ai.get_checkpoint(text,text,text) is planned in a way it does not know (no plan_cache_mode = force_generic_plan)',
  'get_checkpoint without its plan mode');

-- a SECURITY DEFINER function added later whose body the carry cannot enter
create function ai.zz_labelled() returns int language plpgsql security definer set search_path = pg_catalog, pg_temp
as $$<<main>> begin return 1; end$$;
select is(pg_temp.drifted('ai.zz_labelled()', 'return 1', 'return 2'),
  'AS002: ai.distribute(): the body of ai.zz_labelled() starts with neither DECLARE nor BEGIN',
  'a body the carried identity cannot be put into');
drop function ai.zz_labelled();

select is(pg_temp.drifted('ai._fence(text, bigint, bigint)', '-- The held job and its thread in one probe',
                          '-- The held job and its thread in one probe'),
  'no error', 'and the same redefinition without a change passes');

select * from finish();
rollback;
