\ir ../fixtures/helpers.sql
begin;
select plan(4);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;

set local role tenant_a;
select ai.put_memory('{n}', 'k', '{"v": 1}', null, null, '{"text": [1, 2, 3]}');
select is(ai.delete_memory('{n}', 'k'), true, 'deleted');
select is((select count(*)::int from ai.get_memory('{n}', 'k')), 0, 'gone');
select is(ai.delete_memory('{n}', 'k'), false, 'a second delete finds nothing');
reset role;
select is((select count(*)::int from ai.memory_vectors), 0, 'its embeddings went with it');

select * from finish();
rollback;
