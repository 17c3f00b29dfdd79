\ir ../fixtures/helpers.sql
begin;
select plan(4);
-- counts below are of this test's items only (rolled back at the end)
delete from ai.memory_items;
delete from ai_archive.memory_items;

set local role tenant_a;
select ai.put_memory('{p}', 'new', '{"v": "archived"}');
select ai.put_memory('{p}', 'old', '{"v": "archived"}');
select ai.archive_memory('{p}');
select ai.put_memory('{p}', 'new', '{"v": "written since"}');
select ai.put_memory('{p}', 'old', '{"v": "expired since"}', interval '1 second');
reset role;
-- the time read first: Citus refuses a VOLATILE function (ai.now()) in an UPDATE of a distributed table
select ai.now() - interval '1 minute' as expired_at \gset
update ai.memory_items set expires_at = :'expired_at' where key = 'old';
set local role tenant_a;
select is((select (r.restored, r.superseded)::text from ai.restore_memory('{p}') r), '(1,1)',
          'one restored over an expired item, one superseded by a live item');
select is((select value from ai.get_memory('{p}', 'new')), '{"v": "written since"}'::jsonb, 'the live item written since stays');
select is((select value from ai.get_memory('{p}', 'old')), '{"v": "archived"}'::jsonb, 'the expired one gives way to the archived copy');
reset role;
select is((select count(*)::int from ai_archive.memory_items), 0, 'the archive is empty: nothing waits there for ever');

select * from finish();
rollback;
