\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-ev');
select throws_ok($$select ai.record_event('t-ev', 'error', jsonb_build_object('x', repeat('a', 1100000)))$$, 'AS003',
  format('payload is %s bytes, over the limit of 1048576', pg_column_size(jsonb_build_object('x', repeat('a', 1100000)))),
  'payload over 1 MiB');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.session_events where thread_id = 't-ev' and kind = 'error'), 0, 'nothing written');
set local role tenant_a;

select * from finish();
rollback;
