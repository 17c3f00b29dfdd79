\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select is(ai.current_owner(), 'tenant_a', 'tenant_a acts as tenant_a');
set local role tenant_b;
select is(ai.current_owner(), 'tenant_b', 'tenant_b acts as tenant_b');

select * from finish();
rollback;
