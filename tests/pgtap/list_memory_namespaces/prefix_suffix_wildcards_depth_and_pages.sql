\ir ../fixtures/helpers.sql
begin;
select plan(6);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;

set local role tenant_a;
select ai.put_memory(n, 'k', '{"v": 1}')
from (values ('{uid,users,alice}'::text[]), ('{uid,users,malice}'), ('{uid,a,b,alice}'), ('{foo}'), ('{foo,child}'), ('{foobar}')) v(n);
select is((select array_agg(array_to_string(n, '/') order by n) from ai.list_memory_namespaces('{foo}') n), '{foo,foo/child}'::text[], 'prefix by whole labels');
select is((select array_agg(array_to_string(n, '/') order by n) from ai.list_memory_namespaces(suffix => '{alice}') n),
          '{uid/a/b/alice,uid/users/alice}'::text[], 'suffix by whole labels');
select is((select array_agg(array_to_string(n, '/') order by n) from ai.list_memory_namespaces('{uid,*,alice}') n),
          '{uid/users/alice}'::text[], '* is one label');
select is((select array_agg(array_to_string(n, '/') order by n) from ai.list_memory_namespaces(max_depth => 1) n),
          '{foo,foobar,uid}'::text[], 'max_depth cuts and merges');
select is((select array_agg(array_to_string(n, '/')) from ai.list_memory_namespaces(max_rows => 2, skip => 1) n),
          '{foo/child,foobar}'::text[], 'pages in order');
select throws_ok($$select * from ai.list_memory_namespaces(max_depth => 0)$$, 'AS002', null, 'max_depth 0');

select * from finish();
rollback;
