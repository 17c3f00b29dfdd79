\ir ../fixtures/helpers.sql
begin;
select plan(2);

-- The public functions that touch no table run as the caller (complete_and_claim only calls two
-- SECURITY DEFINER functions its caller may call); every other one a role may call is SECURITY
-- DEFINER, owned by the schema owner (tenants hold no table privilege). On a Citus formation a
-- delegated write is an SQL wrapper the planner inlines (ai._formation_delegate), which touches no
-- table: its body as deployed, ai._delegated_<name>_body, is the SECURITY DEFINER one.
select is_empty($$
  select p.oid::regprocedure::text from pg_proc p
  where p.pronamespace = 'ai'::regnamespace and p.prokind = 'f' and p.proname not like '\_%'
    and p.proname not in ('now', 'calling_role', 'current_owner', 'sees_all_owners', 'act_as', 'estimate_tokens',
                          'message_key', 'idempotency_key', 'ulid', 'ulid_time', 'complete_and_claim')
    and not p.prosecdef
    and not (p.prolang = (select oid from pg_language where lanname = 'sql')
             and exists (select from pg_proc b
                          where b.pronamespace = p.pronamespace and b.proname = '_delegated_' || p.proname || '_body'
                            and b.proargtypes = p.proargtypes and b.prosecdef))$$,
  'every other public function is SECURITY DEFINER');
select is_empty($$
  select p.oid::regprocedure::text from pg_proc p
  where p.pronamespace = 'ai'::regnamespace and p.prosecdef
    and p.proowner <> (select nspowner from pg_namespace where nspname = 'ai')$$,
  'owned by the owner of schema ai');

select * from finish();
rollback;
