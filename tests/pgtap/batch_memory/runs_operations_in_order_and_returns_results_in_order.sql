\ir ../fixtures/helpers.sql
begin;
select plan(7);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;

set local role tenant_a;
select ai.batch_memory('[
  {"op": "put", "namespace": ["a"], "key": "k", "value": {"v": 1}},
  {"op": "get", "namespace": ["a"], "key": "k"},
  {"op": "put", "namespace": ["a"], "key": "k", "value": null},
  {"op": "get", "namespace": ["a"], "key": "k"},
  {"op": "put", "namespace": ["a", "b"], "key": "j", "value": {"v": 2}, "ttl_seconds": 60},
  {"op": "search", "namespace_prefix": ["a"], "filter": {"v": {"$gt": 1}}},
  {"op": "list_namespaces", "max_depth": 1}
]') as r \gset
select is(jsonb_array_length(:'r'), 7, 'one result per operation');
select is(:'r'::jsonb -> 0, 'null'::jsonb, 'a put returns null');
select is(:'r'::jsonb #> '{1,value}', '{"v": 1}'::jsonb, 'the get sees the put before it');
select is(:'r'::jsonb -> 3, 'null'::jsonb, 'a put of null deletes');
select is(:'r'::jsonb #> '{5,0,key}', '"j"'::jsonb, 'search');
select is(:'r'::jsonb -> 6, '[["a"]]'::jsonb, 'list_namespaces');
select throws_ok($$select ai.batch_memory('[{"op": "drop"}]')$$, 'AS002', null, 'an unknown operation');

select * from finish();
rollback;
