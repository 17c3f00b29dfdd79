\ir ../fixtures/helpers.sql
begin;
select plan(4);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;

set local role tenant_a;
select ai.put_memory(n, 'k', '{"v": 1}')
from (values ('{foo}'::text[]), ('{foo,child}'), ('{foobar}'), ('{foo2}'), ('{user_1}'), (array[E'foo\x01'])) v(n);
select is((select array_agg(array_to_string(namespace, '/') order by namespace) from ai.search_memory('{foo}', max_rows => 100)),
          '{foo,foo/child}'::text[], 'foo: itself and below, not foobar or foo2');
select is((select count(*)::int from ai.search_memory('{fo}', max_rows => 100)), 0, 'a partial label matches nothing');
select is((select count(*)::int from ai.search_memory('{}', max_rows => 100)), 6, 'an empty prefix matches everything');
select is((select count(*)::int from ai.search_memory('{user_1}', max_rows => 100)), 1, 'no LIKE wildcards');

select * from finish();
rollback;
