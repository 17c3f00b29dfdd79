\ir ../fixtures/helpers.sql
begin;
select plan(5);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;

set local role tenant_a;
select ai.put_memory('{v}', 'x', '{"t": "x"}', null, null, '{"a": [1, 0, 0], "b": [0, 0, 1]}');
select ai.put_memory('{v}', 'y', '{"t": "y"}', null, null, '{"a": [0, 1, 0]}');
select ai.put_memory('{v}', 'none', '{"t": "none"}');
select is((select array_agg(key) from ai.search_memory('{v}', query_embedding => '{0, 0.1, 1}')), '{x,y}'::text[],
          'nearest first, by the best field; no embedding, no result');
select ok(abs((select score from ai.search_memory('{v}', query_embedding => '{0, 0, 2}') where key = 'x') - 1) < 1e-9, 'cosine similarity');
select ok(abs((select score from ai.search_memory('{v}', query_embedding => '{0, 0, 2}', distance => 'inner_product') where key = 'x') - 2) < 1e-9,
          'inner product');
select ok(abs((select score from ai.search_memory('{v}', query_embedding => '{0, 0, 2}', distance => 'l2') where key = 'x') + 1) < 1e-9,
          'l2: minus the distance');
select throws_ok($$select * from ai.search_memory('{v}', query_embedding => '{1}', distance => 'manhattan')$$, 'AS002', null, 'unknown distance');

select * from finish();
rollback;
