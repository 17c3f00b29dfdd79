\ir ../fixtures/helpers.sql
begin;
select plan(12);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;

set local role tenant_a;
select throws_ok($$select ai.put_memory(null, 'k', '{}')$$, 'AS002', null, 'NULL namespace');
select throws_ok($$select ai.put_memory('{}', 'k', '{}')$$, 'AS002', null, 'empty namespace');
select throws_ok($$select ai.put_memory('{a,""}', 'k', '{}')$$, 'AS002', null, 'empty label');
select throws_ok(format('select ai.put_memory(%L, %L, %L)', array[repeat('x', 256)], 'k', '{}'), 'AS002', null, 'label over 255 characters');
select throws_ok(format('select ai.put_memory(%L, %L, %L)', (select array_agg(i::text) from generate_series(1, 21) i), 'k', '{}'),
                 'AS002', null, 'more than 20 labels');
select throws_ok($$select ai.put_memory('{a}', '', '{}')$$, 'AS002', null, 'empty key');
select throws_ok(format('select ai.put_memory(%L, %L, %L)', '{a}', repeat('k', 129), '{}'), 'AS002', null, 'key over 128 characters');
select throws_ok(format('select ai.put_memory(%L, %L, %L)', array[repeat('x', 100), repeat('y', 92)], 'k', '{}'), 'AS002', null,
                 'a namespace over 192 characters in all (with the separator)');
select throws_ok(format('select ai.put_memory(%L, %L, %L, embeddings => %L)', '{a}', 'k', '{}', jsonb_build_object(repeat('f', 65), array[1])),
                 'AS002', null, 'a vector field over 64 characters');
select throws_ok($$select ai.put_memory('{a}', 'k', '[1]')$$, 'AS002', null, 'a value that is no object');
select throws_ok($$select ai.put_memory('{a}', 'k', '{}', interval '-1 minute')$$, 'AS002', null, 'a ttl that is not positive');
select throws_ok(format('select ai.put_memory(%L, %L, %L)', '{a}', 'k', jsonb_build_object('t', repeat(md5('x'), 40000))), 'AS003', null,
                 'a value over 1 MiB');

select * from finish();
rollback;
