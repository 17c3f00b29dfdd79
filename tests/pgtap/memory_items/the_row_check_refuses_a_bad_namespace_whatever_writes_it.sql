\ir ../fixtures/helpers.sql
begin;
select plan(7);

-- The table's CHECK holds for every write, a bulk load's too (bench/memory/load.sql), not only the
-- functions' (which raise AS002 first): labels of 1 to 255 characters, none NULL or holding U+001F,
-- 192 characters in all with one separator between each two.
create temp table bad (namespace text[]);
insert into bad values (array[repeat('x', 256)]), (array['a', repeat('é', 256)]), (array[E'a\x1fb']), (array['a', '']),
                       (array['a', null]);
select is((select count(*)::int from bad b
           where not ai._memory_labels_ok(b.namespace)), 5, 'each bad namespace is found bad');
select throws_ok($$insert into ai.memory_items (owner, namespace, key, value) values ('o', array[repeat('x', 256)], 'k', '{}')$$,
                 '23514', null, 'a label over 255 characters');
select throws_ok($$insert into ai.memory_items (owner, namespace, key, value) values ('o', array['a', E'b\x1f'], 'k', '{}')$$,
                 '23514', null, 'a label holding U+001F');
select throws_ok($$insert into ai.memory_items (owner, namespace, key, value) values ('o', array['a', null], 'k', '{}')$$,
                 '23514', null, 'a NULL label');
select lives_ok($$insert into ai.memory_items (owner, namespace, key, value) values ('o', array[repeat('é', 190), 'b'], 'k', '{}')$$,
                'a namespace of 192 characters (of two bytes each) in all passes');
select throws_ok($$insert into ai.memory_items (owner, namespace, key, value) values ('o', array[repeat('é', 191), 'b'], 'k', '{}')$$,
                 '23514', null, 'one of 193 does not');
select ok(ai._memory_labels_ok(array['a', repeat('b', 188), 'c']), 'a long label between short ones passes');

select * from finish();
rollback;
