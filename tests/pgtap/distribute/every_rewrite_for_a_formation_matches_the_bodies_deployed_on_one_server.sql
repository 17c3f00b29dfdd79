\ir ../fixtures/helpers.sql
begin;
select plan(18);

-- ai.distribute() rewrites deployed function bodies on a Citus formation (the claim's lock, the
-- fence, the ledger's holder check, the append, a step's messages, the count of pending writes, an
-- item's embeddings, the memory store's ttl refresh, the checkpoint reads, the carried identity,
-- the test clock under delegation, plans per call), each by the text it expects in the body (deploy/distribution.sql,
-- ai._formation_rewrites). The same scripts deploy one server, so one server checks them: the dry
-- run executes every rewrite (each new body compiles) and rolls them back. A rewrite whose text
-- drifted from the deployed body raises AS002 here, before a formation finds it
-- (a_body_that_drifted_from_its_rewrite_fails_the_check.sql shows each one failing).
create temp table bodies_before as
  select p.oid, p.prosrc, p.proconfig from pg_proc p where p.pronamespace = 'ai'::regnamespace;

set local role agent_state_owner;
select lives_ok($$select ai._formation_rewrites(dry_run => true)$$,
  'every rewrite a formation needs finds the text it expects in the bodies deployed on one server');
create temp table done as select line from unnest(ai._formation_rewrites(dry_run => true)) line;
select throws_ok($$select ai._formation_rewrites(dry_run => false)$$, 'AS002',
  'ai._formation_rewrites(false) acts on a Citus formation: on one server only its dry run (true)',
  'applied for real it refuses on one server');
reset role;

select ok(exists (select from done where line ~ '^ai\.claim_job\(.*\): the per-thread lock of the coordinator$'),
  'the claim''s lock of the session row');
select is((select count(*)::int from done where line ~ '^ai\.claim_jobs\(.*\): the per-thread lock of the coordinator$'), 1,
  'claim_jobs'' lock (its overload with a request id calls it)');
select ok(exists (select from done where line = 'ai._fence: the thread''s fence on its shard'), 'the fence');
select ok(exists (select from done where line = 'ai._side_effect_holder_alive: the job''s fence on the thread''s worker'),
  'the ledger''s holder check');
select ok(exists (select from done where line = 'ai.append_message_idempotent: the session, the seq and the message in three statements'),
  'the idempotent append');
select ok(exists (select from done where line = 'ai._append_step_messages: one INSERT ... VALUES per message'),
  'a step''s messages');
select ok(exists (select from done where line = 'ai.get_memory: the ttl read, then the new expiry written'),
  'the refreshing get of a memory item');
select ok(exists (select from done where line = 'ai.search_memory: the new expiries computed, then written'),
  'the refreshing memory search');
select ok(exists (select from done where line = 'ai._insert_writes: counts the rows its INSERT returns'),
  'the count of a task''s pending writes');
select ok(exists (select from done where line = 'ai.put_memory: one INSERT ... VALUES per embedding'),
  'an item''s embeddings');
select is((select line from done where line ~ 'functions carry the caller''s identity$'),
  (select count(*) || ' functions carry the caller''s identity'
     from pg_proc p
    where p.pronamespace = 'ai'::regnamespace and p.prosecdef
      and p.prolang = (select oid from pg_language where lanname = 'plpgsql')
      and p.prorettype <> 'trigger'::regtype
      and p.proname not like '\_formation\_%'
      and p.proname not in ('distribute', 'current_owner', 'sees_all_owners', 'calling_role', 'act_as')),
  'every SECURITY DEFINER function of PL/pgSQL carries the identity');
select ok(exists (select from done where line = 'ai._checkpoint_reads: PL/pgSQL, planned per call'),
  'the checkpoint reads of get_checkpoint and list_checkpoints');
select is((select count(*)::int from done where line ~ ': a role that may freeze the clock is refused under delegation$'), 6,
  'every delegated per-thread write refuses a role that may freeze the clock, after the carry');
select ok(exists (select from done where line = 'ai.get_checkpoint(text,text,text): planned per call'), 'get_checkpoint planned per call');
select ok(exists (select from done where line ~ '^ai\.list_checkpoints\(.*\): planned per call$'), 'list_checkpoints planned per call');

select is_empty($$select p.oid::regprocedure from bodies_before b join pg_proc p using (oid)
                  where p.prosrc is distinct from b.prosrc or p.proconfig is distinct from b.proconfig$$,
  'and the dry run left every body as deployed');

select * from finish();
rollback;
