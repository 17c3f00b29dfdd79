\ir ../fixtures/helpers.sql
begin;
select plan(5);

set local role tenant_a;
select ai.create_session('t-st');
select throws_ok($$select ai.set_session_status('t-st', 'running')$$, 'AS002',
  'status ''running'' is not one of active, waiting, completed, failed, cancelled', 'unknown status');
select throws_ok($$select ai.set_session_status('t-st', null)$$, 'AS002',
  'status NULL is not one of active, waiting, completed, failed, cancelled', 'NULL status');
select throws_ok($$select ai.set_session_status('t-st', 'Completed')$$, 'AS002',
  'status ''Completed'' is not one of active, waiting, completed, failed, cancelled', 'status is case-sensitive');
select is((ai.get_session('t-st')).status, 'active', 'status unchanged');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.session_events where thread_id = 't-st' and kind = 'status'), 0, 'no status event');
set local role tenant_a;

select * from finish();
rollback;
