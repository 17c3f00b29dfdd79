\ir ../fixtures/helpers.sql
begin;
select plan(5);

-- A service's ai.acting_owner counts only as ai.act_as sets it, for the transaction it was called
-- in: a value set by hand, or one left on a pooled server connection by an earlier transaction
-- (a session-level SET by another client), is no acting owner.
set local role app_service;
set local ai.acting_owner = 'user-42';
select is(ai.current_owner(), 'app_service', 'an acting owner set by hand is ignored');
select is(ai.sees_all_owners(), true, 'the service acts for nobody then');
select set_config('ai.acting_xact', '1234.5', true) is not null as stale \gset
select is(ai.current_owner(), 'app_service', 'so is one whose transaction mark is not this transaction''s');
select is(ai.act_as('user-42'), 'user-42', 'act_as sets it');
select is(ai.current_owner(), 'user-42', 'and then it counts');

select * from finish();
rollback;
