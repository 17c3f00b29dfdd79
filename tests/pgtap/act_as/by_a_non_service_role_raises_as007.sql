\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select throws_ok($$select ai.act_as('tenant_b')$$, 'AS007',
  'role tenant_a may not act for another owner: it is not a member of ai_service', 'a tenant may not act_as');
select throws_ok($$select ai.act_as(null)$$, 'AS007',
  'role tenant_a may not act for another owner: it is not a member of ai_service', 'not even to clear');
select is(coalesce(current_setting('ai.acting_owner', true), ''), '', 'the setting was not changed');

select * from finish();
rollback;
