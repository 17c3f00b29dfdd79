\ir ../fixtures/helpers.sql
begin;
select plan(4);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;

set local role app_service;
select ai.act_as('user-1');
select ai.put_memory('{prefs}', 'k', '{"lang": "fr"}');
select ai.act_as('user-2');
select is((select count(*)::int from ai.get_memory('{prefs}', 'k')), 0, 'another end user does not see it');
select ai.act_as('user-1');
select is((select value from ai.get_memory('{prefs}', 'k')), '{"lang": "fr"}'::jsonb, 'the end user it was written for does');
select ai.act_as(null);
select is((select count(*)::int from ai.get_memory('{prefs}', 'k')), 0, 'acting for nobody, the service reads its own memory');
reset role;
select is((select owner from ai.memory_items), 'user-1', 'the item belongs to the end user');

select * from finish();
rollback;
