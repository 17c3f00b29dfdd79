\ir ../fixtures/helpers.sql
begin;
select plan(5);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;
delete from ai_archive.memory_items;

set local role tenant_a;
select ai.put_memory('{users,alice}', 'prefs', '{"theme": "dark", "n": 3}', interval '30 days', null,
                     '{"theme": [0.1, 0.2, 0.3], "n": [1, 0, 0]}');
select ai.put_memory('{users,alice,notes}', 'n1', '{"text": "kilo lima"}', null, '{"only this text"}');
select ai.put_memory('{users,bob}', 'prefs', '{"theme": "light"}');
reset role;
create temp table before as
  select to_jsonb(i) as item,
         (select jsonb_agg(to_jsonb(v) order by v.field) from ai.memory_vectors v where v.owner = i.owner and v.ns = i.ns and v.key = i.key) as vectors
  from ai.memory_items i where i.owner = 'tenant_a' and i.namespace[1:2] = '{users,alice}';

set local role tenant_a;
select is(ai.archive_memory('{users,alice}'), 2, 'archive_memory moves the two items under the prefix');
select is((select count(*)::int from ai.search_memory('{users}')), 1, 'only bob''s item is left to read');
select is((select (r.restored, r.superseded)::text from ai.restore_memory('{users,alice}') r), '(2,0)', 'restore_memory brings both back');
reset role;
select is_empty($$
  select b.item, b.vectors from before b
  except
  select to_jsonb(i),
         (select jsonb_agg(to_jsonb(v) order by v.field) from ai.memory_vectors v where v.owner = i.owner and v.ns = i.ns and v.key = i.key)
  from ai.memory_items i where i.owner = 'tenant_a'$$,
  'every column (value, created and updated times, ttl and expiry, search text) and every embedding as before');
select is((select count(*)::int from ai_archive.memory_items), 0, 'and the archive holds nothing of them any more');

select * from finish();
rollback;
