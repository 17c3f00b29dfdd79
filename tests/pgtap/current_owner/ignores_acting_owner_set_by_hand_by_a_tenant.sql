\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_b;
set local ai.acting_owner = 'tenant_a';
select is(ai.current_owner(), 'tenant_b', 'a tenant cannot become another owner by setting ai.acting_owner');
select is(ai.sees_all_owners(), false, 'nor see every owner');

select * from finish();
rollback;
