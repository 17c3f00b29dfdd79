\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-ev');
select throws_ok($$select ai.record_event('t-ev', 'error', null)$$, 'AS002', 'payload must not be NULL', 'NULL payload');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.session_events where thread_id = 't-ev' and kind = 'error'), 0, 'nothing written');
set local role tenant_a;

select * from finish();
rollback;
