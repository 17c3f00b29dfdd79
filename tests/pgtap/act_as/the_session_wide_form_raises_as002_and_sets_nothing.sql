\ir ../fixtures/helpers.sql
begin;
select plan(4);

-- A session-wide acting owner stays on the server connection, which a transaction pooler hands
-- to the next client of the role: act_as is transaction-local only (local => false is refused).
set local role app_service;
select throws_ok($$select ai.act_as('user-42', false)$$, 'AS002', null, 'local => false raises AS002');
select throws_ok($$select ai.act_as('user-42', null)$$, 'AS002', null, 'so does local => NULL');
select is(coalesce(current_setting('ai.acting_owner', true), ''), '', 'the setting was not changed');
select is(ai.act_as('user-42', true), 'user-42', 'local => true (the default) still acts');

select * from finish();
rollback;
