\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select throws_ok($$select ai.create_session('t-big', jsonb_build_object('x', repeat('a', 1100000)))$$, 'AS003',
  format('config is %s bytes, over the limit of 1048576', pg_column_size(jsonb_build_object('x', repeat('a', 1100000)))),
  'config over 1 MiB');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.agent_sessions where thread_id = 't-big'), 0, 'no session written');
select is((select count(*)::int from ai.session_events where thread_id = 't-big'), 0, 'no event written');
set local role tenant_a;

select * from finish();
rollback;
