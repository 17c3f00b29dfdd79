\ir ../fixtures/helpers.sql
begin;
select plan(6);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;
delete from ai_archive.memory_items;

set local role tenant_a;
select ai.put_memory('{facts}', 'k' || i, jsonb_build_object('i', i), null, null, '{"i": [1, 2]}') from generate_series(1, 5) i;
select ai.put_memory('{facts}', 'gone', '{"i": 0}', interval '1 second');
reset role;
-- the time read first: Citus refuses a VOLATILE function (ai.now()) in an UPDATE of a distributed table
select ai.now() - interval '1 minute' as expired_at \gset
update ai.memory_items set expires_at = :'expired_at' where key = 'gone';  -- expired, not swept

set local role tenant_a;
select is(array[ai.archive_memory('{facts}', 2), ai.archive_memory('{facts}', 2), ai.archive_memory('{facts}', 2)], '{2,2,1}',
          'bounded batches in key order: call until it returns less than max_items');
reset role;
select is((select array_agg(key order by key) from ai_archive.memory_items), '{k1,k2,k3,k4,k5}', 'every live item is in the archive');
select is((select count(*)::int from ai_archive.memory_vectors), 5, 'with its embeddings');
select is((select array_agg(key) from ai.memory_items), '{gone}', 'the expired item is left to the sweep, not archived');
select is((select count(*)::int from ai.memory_vectors where key <> 'gone'), 0, 'no embedding is left behind in the hot table');
set local role tenant_a;
select throws_ok($$select ai.archive_memory('{facts}', 0)$$, 'AS002', null, 'max_items must be positive');

select * from finish();
rollback;
