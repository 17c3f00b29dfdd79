\ir ../fixtures/helpers.sql
begin;
select plan(4);

\ir ../fixtures/two_tenants.sql

set local role app_service;
select results_eq($$select (ai.get_session(t)).owner from unnest(array['t-a', 't-b']) t$$, array['tenant_a', 'tenant_b'], 'every session');
select results_eq($$select count(*)::int from unnest(array['t-a', 't-b']) t, ai.get_messages(t)$$, array[2], 'every message');
select results_eq($$select count(*)::int from unnest(array['t-a', 't-b']) t, ai.get_events(t)$$, array[4], 'every event');
select is((ai.get_session('t-a')).owner, 'tenant_a', 'functions reach any tenant''s thread');

select * from finish();
rollback;
