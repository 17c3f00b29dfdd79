\ir ../fixtures/helpers.sql
begin;
select plan(5);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;
delete from ai_archive.memory_items;

set local role app_service;
select ai.act_as('user-1');
select ai.put_memory('{prefs}', 'k', '{"lang": "fr"}');
select ai.act_as('user-2');
select ai.put_memory('{prefs}', 'k', '{"lang": "de"}');
select is(ai.archive_memory(), 1, 'acting for user-2: its one item');
select ai.act_as(null);
select is(ai.archive_memory(), 0, 'acting for nobody: the service''s own memory, which is empty');
reset role;
select is((select array_agg(owner) from ai_archive.memory_items), '{user-2}', 'user-2''s item is archived, user-1''s is not');
set local role app_service;
select ai.act_as('user-2');
select is((select (r.restored, r.superseded)::text from ai.restore_memory('{prefs}') r), '(1,0)', 'restored for user-2');
select is((select value from ai.get_memory('{prefs}', 'k')), '{"lang": "de"}'::jsonb, 'and user-2 reads it again');

select * from finish();
rollback;
