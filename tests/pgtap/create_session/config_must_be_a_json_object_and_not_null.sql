\ir ../fixtures/helpers.sql
begin;
select plan(4);

set local role tenant_a;
select throws_ok($$select ai.create_session('t-cfg', null)$$, 'AS002', 'config must not be NULL', 'NULL config');
select throws_ok($$select ai.create_session('t-cfg', '[1, 2]')$$, 'AS002', 'config must be a JSON object, not array', 'array config');
select throws_ok($$select ai.create_session('t-cfg', '"text"')$$, 'AS002', 'config must be a JSON object, not string', 'string config');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.agent_sessions where thread_id = 't-cfg'), 0, 'nothing written');
set local role tenant_a;

select * from finish();
rollback;
