\ir ../fixtures/helpers.sql
begin;
select plan(4);

set local role tenant_a;
select is(ai.sees_all_owners(), false, 'a tenant does not see all owners');
set local role app_service;
select is(ai.sees_all_owners(), true, 'a service acting for nobody sees all owners');
select ai.act_as('user-42');
select is(ai.sees_all_owners(), false, 'a service acting for an owner does not');
select ai.act_as(null);
select is(ai.sees_all_owners(), true, 'after act_as(NULL) it sees all owners again');

select * from finish();
rollback;
