\ir ../fixtures/helpers.sql
begin;
select plan(5);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;

set local role tenant_a;
select set_config('ai.frozen_now', '2030-01-01 00:00:00+00', true) is not null as frozen \gset
select is((ai.put_memory('{users,alice}', 'prefs', '{"theme": "dark"}')).value, '{"theme": "dark"}'::jsonb, 'put returns the item');
select set_config('ai.frozen_now', '2030-01-01 00:05:00+00', true) is not null as moved \gset
select ai.put_memory('{users,alice}', 'prefs', '{"theme": "light"}');
select is((select value from ai.get_memory('{users,alice}', 'prefs')), '{"theme": "light"}'::jsonb, 'the second put replaced the value');
select is((select created_at from ai.get_memory('{users,alice}', 'prefs')), '2030-01-01 00:00:00+00'::timestamptz, 'created_at is kept');
select is((select updated_at from ai.get_memory('{users,alice}', 'prefs')), '2030-01-01 00:05:00+00'::timestamptz, 'updated_at moves');
select is((select count(*)::int from ai.search_memory('{users}')), 1, 'one item, not two');

select * from finish();
rollback;
