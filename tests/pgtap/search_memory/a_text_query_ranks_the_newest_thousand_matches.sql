\ir ../fixtures/helpers.sql
begin;
select plan(4);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;
select set_config('ai.frozen_now', '2030-01-01 00:00:00+00', true) is not null as frozen \gset

-- A text query ranks the newest matches, at least 1,000 of them or 10 per row asked for (as the
-- vector search takes its candidates), not every match (issue 34 item 8): the oldest item, the
-- best match, is past the first 1,000 of 1,001 matches.
set local role tenant_a;
select ai.put_memory('{d}', 'oldest', '{"text": "wolf wolf wolf wolf"}');
select set_config('ai.frozen_now', '2030-01-01 00:00:01+00', true) is not null as moved \gset
select count(ai.put_memory('{d}', 'k' || i, jsonb_build_object('text', 'wolf and ' || i))) from generate_series(1, 1000) i;
select isnt((select key from ai.search_memory('{d}', query => 'wolf', max_rows => 1)), 'oldest',
            'the best match past the newest 1,000 matches is not ranked');
select is((select key from ai.search_memory('{d}', query => 'wolf', max_rows => 101) limit 1), 'oldest',
          '10 per row asked for: 1,010 matches ranked, the best first');
select is((select key from ai.search_memory('{d}', query => 'wolf', max_rows => 1, skip => 100)),
          (select key from ai.search_memory('{d}', query => 'wolf', max_rows => 101) offset 100),
          'the rows skipped count as asked for: the page is the same ranking''s');
select is((select count(*)::int from ai.search_memory('{d}', query => 'wolf', max_rows => 1000)), 1000,
          'a page of 1,000 rows is full');

select * from finish();
rollback;
