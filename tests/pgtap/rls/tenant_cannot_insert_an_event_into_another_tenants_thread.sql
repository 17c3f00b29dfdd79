\ir ../fixtures/helpers.sql
begin;
select plan(3);

\ir ../fixtures/two_tenants.sql

set local role tenant_b;
select throws_ok($$insert into ai.session_events (thread_id, owner, kind) values ('t-a', 'tenant_a', 'forged')$$, '42501',
                 'new row violates row-level security policy for table "session_events"',
                 'with owner = tenant_a the policy refuses it');
select throws_ok($$insert into ai.session_events (thread_id, owner, kind) values ('t-a', 'tenant_b', 'forged')$$, '23503', null,
                 'with owner = tenant_b there is no such (thread, owner) session');
reset role;
select is((select count(*)::int from ai.session_events where thread_id = 't-a' and kind = 'forged'), 0, 'nothing written');

select * from finish();
rollback;
