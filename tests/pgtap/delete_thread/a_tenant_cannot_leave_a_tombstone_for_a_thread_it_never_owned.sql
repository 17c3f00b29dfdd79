\ir ../fixtures/helpers.sql
begin;
select plan(5);

-- A tombstone makes a late write raise AS020. A tenant that could write one for a thread id it
-- never owned (a raw INSERT, before tenants lost their table privileges) could refuse that id
-- to itself and probe ids; only ai.delete_thread writes one, for the caller's own thread.
set local role tenant_b;
select ai.put_checkpoint('t-tomb-b', '', 'c1', null, 'test', '\x01') is not null as made \gset
set local role tenant_a;
select throws_ok($$insert into ai.deleted_threads (thread_id, owner) values ('t-never', 'tenant_a')$$, '42501', null,
                 'no raw tombstone for an id it never owned');
select throws_ok($$insert into ai.deleted_threads (thread_id, owner) values ('t-tomb-b', 'tenant_b')$$, '42501', null,
                 'nor for another tenant''s thread');
select is(ai.delete_thread('t-tomb-b'), false, 'delete_thread of another tenant''s thread does nothing');
reset role;
select is((select count(*)::int from ai.deleted_threads where thread_id in ('t-never', 't-tomb-b')), 0, 'no tombstone written');
set local role tenant_b;
select is(ai.put_checkpoint('t-tomb-b', '', 'c2', 'c1', 'test', '\x01'), 'c2', 'tenant_b writes on');

select * from finish();
rollback;
