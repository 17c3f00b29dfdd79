-- Tenants :first to :last (bench_mem_t<k>) each get :per memory items, in both stores, the same
-- items as bench_memory.py's put() load: key k<i>, namespace users/u<i % 50>, value {"n": i % 1000,
-- "tag": "t<i % 7>", "text": 12 words}, the newest last. Ours as each tenant's rows of
-- ai.memory_items (search_text as ai.put_memory makes it for a put without index_texts: the keys
-- and strings of the whole value); PostgresStore's as rows of its store table (prefix t<k>.users.u<n>,
-- its namespace per tenant). Bulk SQL as a superuser in the bench's own database (put() would take
-- most of an hour for a million); the row CHECK and the generated ns column run as for any write.
-- psql variables: first, last, per, store_schema.
create temp table bench_items as
select k, i,
       pg_catalog.jsonb_build_object(
         'n', i % 1000, 'tag', 't' || (i % 7),
         'text', (select pg_catalog.string_agg((array['apple', 'banana', 'cherry', 'delta', 'echo', 'foxtrot', 'golf', 'hotel',
                                                      'india', 'juliet', 'kilo', 'lima', 'mike', 'november'])
                                                [1 + (pg_catalog.hashint8(i::bigint * 16 + j + k * 7919) & 2147483647) % 14], ' ' order by j)
                  from pg_catalog.generate_series(1, 12) j)) as value,
       now() - interval '1 day' + i * interval '1 ms' as at
from pg_catalog.generate_series(:first, :last) k, pg_catalog.generate_series(0, :per - 1) i;

insert into ai.memory_items (owner, namespace, key, value, created_at, updated_at, search_text)
select 'bench_mem_t' || k, array['users', 'u' || (i % 50)], 'k' || i, value, at, at,
       pg_catalog.jsonb_to_tsvector('simple'::regconfig, value, '["key", "string"]')
from bench_items order by k, i;

insert into :"store_schema".store (prefix, key, value, created_at, updated_at)
select 't' || k || '.users.u' || (i % 50), 'k' || i, value, at, at
from bench_items order by k, i;

drop table bench_items;
