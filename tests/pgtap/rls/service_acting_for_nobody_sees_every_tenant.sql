\ir ../fixtures/helpers.sql
begin;
select plan(4);

\ir ../fixtures/two_tenants.sql

set local role app_service;
select results_eq($$select thread_id from ai.agent_sessions order by thread_id$$, array['t-a', 't-b'], 'every session');
select results_eq($$select count(*)::int from ai.session_messages$$, array[2], 'every message');
select results_eq($$select count(*)::int from ai.session_events$$, array[4], 'every event');
select is((ai.get_session('t-a')).owner, 'tenant_a', 'functions reach any tenant''s thread');

select * from finish();
rollback;
