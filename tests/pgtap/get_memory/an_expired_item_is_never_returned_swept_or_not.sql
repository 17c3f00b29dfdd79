\ir ../fixtures/helpers.sql
begin;
select plan(5);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;

set local role tenant_a;
select set_config('ai.frozen_now', '2030-01-01 00:00:00+00', true) is not null as frozen \gset
select ai.put_memory('{n}', 'short', '{"v": 1}', interval '1 minute');
select ai.put_memory('{n}', 'forever', '{"v": 2}');
select is((select count(*)::int from ai.get_memory('{n}', 'short')), 1, 'live before its expiry');
select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select is((select count(*)::int from ai.get_memory('{n}', 'short')), 0, 'gone at its expiry, with no sweep');
select is((select array_agg(key) from ai.search_memory('{n}')), '{forever}'::text[], 'search leaves it out');
select is((select count(*)::int from ai.get_memory('{n}', 'short', true)), 0, 'a refreshing read does not bring it back');
select is((select count(*)::int from ai.list_memory_namespaces('{n}')), 1, 'the namespace is listed for the live item only');

select * from finish();
rollback;
