\ir ../fixtures/helpers.sql
begin;
select plan(7);

-- On one server (no citus extension) ai.distribute() is a no-op: the same step can run in a deploy
-- script for a single server and for a Citus formation (docs/scaling.md).
select is_empty($$select from pg_extension where extname = 'citus'$$, 'this server has no citus extension');

set local role agent_state_owner;
select matches(ai.distribute(), '^citus is not installed in this database: nothing to distribute',
  'it says there is nothing to distribute');
reset role;

select ok((select qual from pg_policies where schemaname = 'ai' and tablename = 'agent_sessions'
             and policyname = 'agent_sessions_by_owner') ~ 'SELECT ai.current_owner\(\)',
  'the policies keep their once-per-statement subquery');
select is((select pg_get_constraintdef(oid) from pg_constraint
            where conrelid = 'ai.human_approvals'::regclass and contype = 'p'),
  'PRIMARY KEY (approval_id)', 'human_approvals keeps its primary key');
select is_empty($$select from ai.formation_secret$$, 'and no formation secret is made');
select is_empty($$select from ai.formation_two_phase$$, 'the two-phase table is empty');
select is_empty($$select from pg_trigger where tgname = 'formation_two_phase'$$,
  'and no table of the queue has the trigger that makes its transactions two-phase on a formation');

select * from finish();
rollback;
