\ir ../fixtures/helpers.sql
begin;
select plan(4);

-- owner, ns and key are the primary key of ai.memory_items (and of its archive twin), with a
-- vector's field that of ai.memory_vectors: at their maxima (owner 255, namespace 192 in all, key
-- 128, field 64) in random characters of four bytes, which do not compress, each entry fits the
-- btree's 2,704 bytes (issue 37: 20 labels of 255 and a 1,024-character key did not: 54000).
create temp table wide (n int primary key, t text);
insert into wide
select n, (select string_agg(chr(65536 + ((n * 7919 + i * 104729) % 1000000)), '') from generate_series(1, len) i)
from (values (1, 255), (2, 94), (3, 97), (4, 128), (5, 64)) v(n, len);

select lives_ok($$insert into ai.memory_items (owner, namespace, key, value)
                  select (select t from wide where n = 1), array[(select t from wide where n = 2), (select t from wide where n = 3)],
                         (select t from wide where n = 4), '{}'$$,
                'an item at every maximum is stored');
select lives_ok($$insert into ai.memory_vectors (owner, ns, key, field, embedding)
                  select owner, ns, key, (select t from wide where n = 5), '{1}' from ai.memory_items
                  where owner = (select t from wide where n = 1)$$,
                'and its vector of the longest field');
select lives_ok($$insert into ai_archive.memory_items select * from ai.memory_items where owner = (select t from wide where n = 1)$$,
                'the archive''s copy too');
select lives_ok($$insert into ai_archive.memory_vectors select * from ai.memory_vectors where owner = (select t from wide where n = 1)$$,
                'and of its vector');

select * from finish();
rollback;
