\ir ../fixtures/helpers.sql
begin;
select plan(6);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;
delete from ai_archive.memory_items;

set local role tenant_a;
select ai.put_memory('{users,alice}', 'prefs', '{"theme": "dark"}');
select ai.put_memory('{users,alice}', 'kept', '{"theme": "light"}');
select ai.archive_memory('{users,alice}', 1);  -- 'kept' is archived, 'prefs' stays hot

set local role tenant_b;
select is(ai.archive_memory('{users,alice}'), 0, 'tenant b archives nothing of tenant a''s namespace');
select is(ai.archive_memory(), 0, 'nor of all its memory');
select is((select (r.restored, r.superseded)::text from ai.restore_memory() r), '(0,0)', 'and restores nothing of tenant a''s archive');
select throws_ok($$select ai.act_as('tenant_a')$$, 'AS007', null, 'a tenant cannot act for another owner');
reset role;
select is((select array_agg(owner || ':' || key) from ai.memory_items), '{tenant_a:prefs}', 'tenant a''s hot item is untouched');
select is((select array_agg(owner || ':' || key) from ai_archive.memory_items), '{tenant_a:kept}', 'and its archived item too');

select * from finish();
rollback;
