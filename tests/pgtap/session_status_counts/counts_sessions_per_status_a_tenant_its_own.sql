\ir ../fixtures/helpers.sql
begin;
select plan(4);
delete from ai.agent_sessions;  -- other runs' sessions are out of the way for this transaction (rolled back)

set local role tenant_a;
select count(ai.create_session('ssc-a' || i)) from generate_series(1, 3) i \gset
select (ai.set_session_status('ssc-a1', 'completed')).status as done \gset
set local role tenant_b;
select (ai.create_session('ssc-b1')).thread_id as b \gset

set local role tenant_a;
select results_eq($$ select status, sessions from ai.session_status_counts() $$,
  $$ values ('active', 2::bigint), ('completed', 1::bigint) $$, 'tenant_a counts its own, per status');
set local role tenant_b;
select results_eq($$ select status, sessions from ai.session_status_counts() $$,
  $$ values ('active', 1::bigint) $$, 'tenant_b its one');
set local role app_service;
select results_eq($$ select status, sessions from ai.session_status_counts() $$,
  $$ values ('active', 3::bigint), ('completed', 1::bigint) $$, 'the service every owner''s');
select results_eq($$ select status, sessions from ai.session_status_counts('tenant_b') $$,
  $$ values ('active', 1::bigint) $$, 'or one owner''s');

select * from finish();
rollback;
