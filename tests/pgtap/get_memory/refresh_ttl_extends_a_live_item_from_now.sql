\ir ../fixtures/helpers.sql
begin;
select plan(4);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;

set local role tenant_a;
select set_config('ai.frozen_now', '2030-01-01 00:00:00+00', true) is not null as frozen \gset
select ai.put_memory('{n}', 'k', '{"v": 1}', interval '10 minutes');
select set_config('ai.frozen_now', '2030-01-01 00:08:00+00', true) is not null as moved \gset
select is((select expires_at from ai.get_memory('{n}', 'k')), '2030-01-01 00:10:00+00'::timestamptz, 'a plain read leaves the expiry');
select is((select expires_at from ai.get_memory('{n}', 'k', true)), '2030-01-01 00:18:00+00'::timestamptz, 'a refreshing read moves it to now + ttl');
select set_config('ai.frozen_now', '2030-01-01 00:15:00+00', true) is not null as later \gset
select is((select expires_at from ai.search_memory('{n}', refresh_ttl => true)), '2030-01-01 00:25:00+00'::timestamptz, 'so does a refreshing search');
select set_config('ai.frozen_now', '2030-01-01 00:24:00+00', true) is not null as later2 \gset
select is((select count(*)::int from ai.get_memory('{n}', 'k')), 1, 'still live past its first expiry');

select * from finish();
rollback;
