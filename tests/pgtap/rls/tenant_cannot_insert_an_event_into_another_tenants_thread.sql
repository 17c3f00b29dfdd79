\ir ../fixtures/helpers.sql
begin;
select plan(3);

\ir ../fixtures/two_tenants.sql

set local role tenant_b;
select throws_ok($$insert into ai.session_events (thread_id, owner, kind) values ('t-a', 'tenant_a', 'forged')$$, '42501',
                 'permission denied for table session_events',
                 'with owner = tenant_a it is refused (no table privilege)');
select throws_ok($$insert into ai.session_events (thread_id, owner, kind) values ('t-a', 'tenant_b', 'forged')$$, '42501', null,
                 'with owner = tenant_b too');
reset role;
select is((select count(*)::int from ai.session_events where thread_id = 't-a' and kind = 'forged'), 0, 'nothing written');

select * from finish();
rollback;
