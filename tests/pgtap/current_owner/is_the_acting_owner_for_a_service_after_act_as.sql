\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role app_service;
select is(ai.current_owner(), 'app_service', 'a service acting for nobody is itself');
select ai.act_as('user-42');
select is(ai.current_owner(), 'user-42', 'after act_as the service acts as that owner');
select ai.act_as(null);
select is(ai.current_owner(), 'app_service', 'act_as(NULL) stops acting');

select * from finish();
rollback;
