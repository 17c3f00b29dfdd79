\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/side_effects.sql
select plan(16);

-- On a Citus formation each per-thread write that Citus delegates (ai._formation_delegated_writes)
-- becomes an SQL wrapper of its signature, which the planner inlines into the caller's
-- statement, a strict entry that Citus delegates by thread_id, and the deployed body
-- (ai._formation_delegate). Citus 13.2.2 hashes the distribution argument of a delegated call
-- before the function runs, and a NULL there crashes the coordinator's backend: a tenant's psql
-- must not reach that hash with a NULL. One server checks the shape the formation gets: the same
-- statements but Citus' own calls, in this transaction (rolled back).
reset role;
select set_config('ai.formation_rewrites_dry_run', 'on', true);
set local role agent_state_owner;
select lives_ok($$select ai._formation_delegate(dry_run => false)$$, 'the delegated writes made as a formation makes them');
reset role;

select is_empty($$
  select p.oid::regprocedure from unnest(ai._formation_delegated_writes()) w(fn)
    join pg_proc p on p.oid = w.fn::regprocedure
   where p.prolang <> (select oid from pg_language where lanname = 'sql') or p.prosecdef or p.proconfig is not null$$,
  'each write is an SQL wrapper: no SECURITY DEFINER, no SET (so that the planner inlines it)');
select is_empty($$
  select p.oid::regprocedure from pg_proc p
   where p.pronamespace = 'ai'::regnamespace and p.proname like '\_delegated\_%' and p.proname not like '%\_body'
     and (not p.proisstrict or p.proretset)$$,
  'each entry Citus delegates is strict and returns one value: the planner folds a NULL argument before Citus sees it');
select is((select count(*)::int from pg_proc p
            where p.pronamespace = 'ai'::regnamespace and p.proname like '\_delegated\_%' and p.proname not like '%\_body'
              and p.proisstrict and not p.proretset),
          cardinality(ai._formation_delegated_writes()), 'an entry for each delegated write');
select ok((select bool_and(has_function_privilege('ai_user', w.fn, 'execute') and obj_description(w.fn::regprocedure, 'pg_proc') is not null)
             from unnest(ai._formation_delegated_writes()) w(fn)),
          'each wrapper keeps the grants and the comment of the function it replaced');
select is_empty($$
  select p.oid::regprocedure from pg_proc p
   where p.pronamespace = 'ai'::regnamespace and p.proname like '\_delegated\_%\_body'
     and (has_function_privilege('ai_user', p.oid, 'execute') or has_function_privilege('ai_service', p.oid, 'execute')
          or has_function_privilege('public', p.oid, 'execute') or not p.prosecdef)$$,
  'each body is the owner''s, SECURITY DEFINER as deployed');

-- the wrapper is inlined: the planned statement calls the entry
create temp table plan_lines (line text);
do $$
declare l text;
begin
  for l in execute $q$explain (verbose, costs off) select ai.put_writes('qa1', '', 'c1', 't1', '{0}', '{ch}', '{json}', array['\x01'::bytea])$q$ loop
    insert into plan_lines values (l);
  end loop;
end
$$;
select ok(exists (select from plan_lines where line ~ 'ai\._delegated_put_writes\(''qa1''::text, .*::ai\._delegated_put_writes_args\)'),
  'a call of a write is planned as a call of its entry with the thread and a row of the other arguments');

set local role tenant_a;
select throws_ok($$select ai.append_message_idempotent(null, 'user', '{"text": "hi"}')$$, 'AS002', 'thread_id must not be NULL',
  'a NULL thread_id: AS002, raised while the call is planned');
select throws_ok($$select * from ai.begin_side_effect(null, 'k')$$, 'AS002', 'thread_id must not be NULL',
  'in FROM too');
select throws_ok($$select ai.put_writes('', '', 'c1', 't1', '{0}', '{ch}', '{json}', array['\x01'::bytea])$$, 'AS002', 'thread_id must not be empty',
  'an empty thread_id: the message one server gives');
prepare put(text) as select ai.finish_side_effect($1, 'k', '{}', null, 1);
select throws_ok($$execute put(null)$$, 'AS002', 'thread_id must not be NULL', 'a NULL parameter of a prepared statement');
select is(ai._delegated_put_writes(null, row('', 'c1', 't1', '{0}', '{ch}', '{json}', array['\x01'::bytea], null, null, null)::ai._delegated_put_writes_args),
  null, 'the entry called with a NULL thread_id does nothing');
select is(ai._delegated_abandon_side_effect('qa1', null), null, 'nor with a NULL row');

-- and the writes work through it as before
select is((ai.append_message_idempotent('qa1', 'user', '{"text": "hi"}', idempotency_key => 'd1')).seq, 1::bigint,
  'an append through the wrapper');
select is((select outcome from ai.begin_side_effect('qa1', 'charge-9', '{"amount": 1}')), 'execute', 'a reservation through the wrapper');
select is((ai.put_checkpoint('qa1', '', 'c1', null, 'json', '\x00', '{}', '{}')), 'c1', 'a checkpoint through the wrapper');

select * from finish();
rollback;
