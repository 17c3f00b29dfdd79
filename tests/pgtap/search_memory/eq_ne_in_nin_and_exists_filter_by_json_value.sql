\ir ../fixtures/helpers.sql
begin;
select plan(8);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;

set local role tenant_a;
select ai.put_memory('{n}', 'a', '{"color": "red", "n": 1, "tags": ["x"]}');
select ai.put_memory('{n}', 'b', '{"color": "blue", "n": 1.0}');
select ai.put_memory('{n}', 'c', '{"n": 2}');
select is((select array_agg(key order by key) from ai.search_memory('{n}', '{"color": "red"}')), '{a}'::text[], 'a plain value is equality');
select is((select array_agg(key order by key) from ai.search_memory('{n}', '{"n": {"$eq": 1}}')), '{a,b}'::text[], '1 = 1.0 as numbers');
select is((select array_agg(key order by key) from ai.search_memory('{n}', '{"color": {"$ne": "red"}}')), '{b,c}'::text[], '$ne holds for a missing field');
select is((select array_agg(key order by key) from ai.search_memory('{n}', '{"color": {"$in": ["red", "blue"]}}')), '{a,b}'::text[], '$in');
select is((select array_agg(key order by key) from ai.search_memory('{n}', '{"color": {"$nin": ["red"]}}')), '{b,c}'::text[], '$nin');
select is((select array_agg(key order by key) from ai.search_memory('{n}', '{"color": {"$exists": false}}')), '{c}'::text[], '$exists false');
select is((select array_agg(key order by key) from ai.search_memory('{n}', '{"tags": ["x"]}')), '{a}'::text[], 'an array value is equality too');
select is((select array_agg(key order by key) from ai.search_memory('{n}', '{"color": "red", "n": 1}')), '{a}'::text[], 'every field must match');

select * from finish();
rollback;
