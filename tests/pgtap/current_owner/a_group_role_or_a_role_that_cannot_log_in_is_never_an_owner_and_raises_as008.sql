\ir ../fixtures/helpers.sql
begin;
select plan(7);

-- SET ROLE ai_user would otherwise make current_owner() 'ai_user': one identity every tenant
-- could take. A role that cannot log in is never an owner, with or without a function call.
create role tenant_team nologin;
grant ai_user to tenant_team;
grant tenant_team to tenant_a;
set local role tenant_a;
select ai.create_session('t-own') is not null as made \gset
set local role ai_user;
select throws_ok($$select ai.current_owner()$$, 'AS008', null, 'SET ROLE ai_user: current_owner() refuses');
select throws_ok($$select ai.create_session('t-shared')$$, 'AS008', null, 'and no session is made for ai_user');
select throws_ok($$select ai.get_session('t-own')$$, 'AS008', null, 'nor read as ai_user');
reset role;
set local role tenant_a;
set local role tenant_team;
select throws_ok($$select ai.current_owner()$$, 'AS008', null, 'any other role that cannot log in: refused too');
reset role;
set local role app_service;
set local role ai_service;
select throws_ok($$select ai.sees_all_owners()$$, 'AS008', null, 'SET ROLE ai_service does not see every tenant');
reset role;
set local role app_service;
set local ai.acting_owner = 'ai_user';
-- set by hand with this transaction's mark, as ai.act_as would (it refuses a group role itself)
select set_config('ai.acting_xact', (extract(epoch from transaction_timestamp()))::text, true) is not null as marked \gset
select throws_ok($$select ai.current_owner()$$, 'AS008', null, 'an acting owner that is a group role, set by hand, is refused');
reset role;
select is((select count(*)::int from ai.agent_sessions where owner in ('ai_user', 'ai_service', 'tenant_team')), 0,
          'no row is owned by a group role');

select * from finish();
rollback;
