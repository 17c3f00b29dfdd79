\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role app_service;
select is(ai.act_as('user-42'), 'user-42', 'act_as returns the owner it now acts for');
select is(current_setting('ai.acting_owner'), 'user-42', 'ai.acting_owner holds it');

select * from finish();
rollback;
