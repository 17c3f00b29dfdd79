\ir ../fixtures/helpers.sql
begin;
select plan(5);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;

set local role tenant_a;
select ai.put_memory('{n}', 'a', '{"n": 1}');
select throws_ok($$select * from ai.search_memory('{n}', '{"n": {"$regex": "1"}}')$$, 'AS002', null, 'unknown operator');
select throws_ok($$select * from ai.search_memory('{empty}', '{"n": {"$gt": 1, "$regex": "1"}}')$$, 'AS002', null,
                 'also where no item is read');
select throws_ok($$select * from ai.search_memory('{n}', '{"n": {"$in": 1}}')$$, 'AS002', null, '$in without an array');
select throws_ok($$select * from ai.search_memory('{n}', max_rows => 0)$$, 'AS002', null, 'max_rows 0');
select throws_ok($$select * from ai.search_memory('{n}', skip => -1)$$, 'AS002', null, 'a negative skip');

select * from finish();
rollback;
