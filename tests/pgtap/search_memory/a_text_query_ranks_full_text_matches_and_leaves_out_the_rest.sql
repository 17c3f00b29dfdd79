\ir ../fixtures/helpers.sql
begin;
select plan(5);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;

-- Without embeddings a query is not ignored (PostgresStore ignores it): it ranks by full-text
-- search over the indexed fields.
set local role tenant_a;
select ai.put_memory('{d}', 'fox', '{"text": "the quick brown fox jumps over the lazy dog, fox"}');
select ai.put_memory('{d}', 'dog', '{"text": "a lazy dog sleeps"}');
select ai.put_memory('{d}', 'cat', '{"text": "a cat"}');
select ai.put_memory('{d}', 'hidden', '{"text": "fox"}', null, '{}');
select ai.put_memory('{d}', 'titled', '{"title": "fox", "body": "nothing"}', null, '{nothing}');
select is((select array_agg(key order by score desc) from ai.search_memory('{d}', query => 'fox')), '{fox}'::text[],
          'matches only, an item indexed with no texts or other fields left out');
select is((select array_agg(key) from ai.search_memory('{d}', query => 'lazy dog')), '{dog,fox}'::text[], 'best rank first');
select ok((select bool_and(score > 0) from ai.search_memory('{d}', query => 'lazy')), 'scores are the rank');
select is((select count(*)::int from ai.search_memory('{d}', query => '!!!')), 5, 'a query of no words ranks nothing: every item');
select is((select array_agg(key) from ai.search_memory('{d}', query => 'nothing')), '{titled}'::text[], 'the texts given are what is indexed');

select * from finish();
rollback;
