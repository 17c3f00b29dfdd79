\ir ../fixtures/helpers.sql
begin;
select plan(6);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;

set local role tenant_a;
select ai.put_memory('{shared}', 'k', '{"who": "a"}');
set local role tenant_b;
select is((select count(*)::int from ai.get_memory('{shared}', 'k')), 0, 'b does not see a''s item');
select is((select count(*)::int from ai.search_memory()), 0, 'nor finds it');
select is((select count(*)::int from ai.list_memory_namespaces()), 0, 'nor lists its namespace');
select is(ai.delete_memory('{shared}', 'k'), false, 'nor deletes it');
select ai.put_memory('{shared}', 'k', '{"who": "b"}');
set local role tenant_a;
select is((select value from ai.get_memory('{shared}', 'k')), '{"who": "a"}'::jsonb, 'the same namespace and key of b is another item');
select throws_ok($$select * from ai.memory_items$$, '42501', null, 'no table privilege');

select * from finish();
rollback;
