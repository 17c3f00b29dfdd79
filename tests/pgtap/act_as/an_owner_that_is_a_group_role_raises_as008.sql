\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role app_service;
select throws_ok($$select ai.act_as('ai_user')$$, 'AS008', null, 'ai_user is no owner');
select throws_ok($$select ai.act_as('ai_service')$$, 'AS008', null, 'nor ai_service');
select is(ai.act_as('user-123'), 'user-123', 'an end-user id that is no role is fine');

select * from finish();
rollback;
