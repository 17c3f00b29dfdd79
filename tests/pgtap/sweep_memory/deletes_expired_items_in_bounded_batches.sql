\ir ../fixtures/helpers.sql
begin;
select plan(5);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;

select set_config('ai.frozen_now', '2030-01-01 00:00:00+00', true) is not null as frozen \gset
set local role tenant_a;
select ai.put_memory('{n}', 'e' || i, '{}', interval '1 minute') from generate_series(1, 3) i;
select ai.put_memory('{n}', 'keep', '{}', interval '1 hour');
set local role tenant_b;
select ai.put_memory('{n}', 'e', '{}', interval '1 minute');
set local role app_service;
select is(ai.sweep_memory(10), 0, 'nothing expired yet');
select set_config('ai.frozen_now', '2030-01-01 00:02:00+00', true) is not null as moved \gset
select is(ai.sweep_memory(3), 3, 'one bounded batch');
select is(ai.sweep_memory(3), 1, 'the rest, of every tenant');
reset role;
select is((select array_agg(key) from ai.memory_items), '{keep}'::text[], 'the live item stays');
set local role tenant_a;
select throws_ok($$select ai.sweep_memory(10)$$, '42501', null, 'a tenant may not sweep');

select * from finish();
rollback;
