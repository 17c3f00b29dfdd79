\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/retention.sql

set local role tenant_b;
select results_eq($$select thread_id from ai.list_sessions() where thread_id ~ '^(done|fresh|live)-'$$,
                  $$values ('done-b')$$, 'tenant_b sees its one session');
select is_empty($$select thread_id from ai.list_sessions(owner => 'tenant_a')$$,
                'asking for another owner''s sessions finds nothing');

select * from finish();
rollback;
