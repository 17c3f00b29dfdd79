\ir ../fixtures/helpers.sql
begin;
select plan(6);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;

-- PostgresStore compares filter values as text, so "9" >= "10" there and 9 < 10 fails
-- (langgraph #7684). Here both orders hold, each for its own JSON type.
set local role tenant_a;
select ai.put_memory('{n}', 'nine', '{"n": 9, "s": "9"}');
select ai.put_memory('{n}', 'ten', '{"n": 10, "s": "10"}');
select is((select array_agg(key) from ai.search_memory('{n}', '{"n": {"$lt": 10}}')), '{nine}'::text[], '9 < 10');
select is((select array_agg(key) from ai.search_memory('{n}', '{"n": {"$gt": 9}}')), '{ten}'::text[], '10 > 9');
select is((select array_agg(key) from ai.search_memory('{n}', '{"s": {"$gt": "10"}}')), '{nine}'::text[], '"9" > "10"');
select is((select array_agg(key) from ai.search_memory('{n}', '{"s": {"$lte": "10"}}')), '{ten}'::text[], '"10" <= "10"');
select is((select count(*)::int from ai.search_memory('{n}', '{"n": {"$gt": "1"}}')), 0, 'a number is never ordered against a string');
select is((select array_agg(key order by key) from ai.search_memory('{n}', '{"n": {"$gte": 9, "$lte": 10}}')), '{nine,ten}'::text[],
          'all operators of a field must hold');

select * from finish();
rollback;
