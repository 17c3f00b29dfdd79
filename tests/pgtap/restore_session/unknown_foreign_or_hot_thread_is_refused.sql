\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/retention.sql
set local role app_service;
select count(*) from ai.archive_sessions('90 days');

select throws_ok($$select ai.restore_session('live-a')$$, 'AS001', 'archived thread live-a not found', 'a hot session is not in the archive');
select throws_ok($$select ai.restore_session('nope')$$, 'AS001', 'archived thread nope not found', 'unknown thread');
select ai.act_as('tenant_b');
select throws_ok($$select ai.restore_session('done-a')$$, 'AS001', 'archived thread done-a not found',
                 'acting for another owner, tenant_a''s archive does not exist');
select ai.act_as(null);
-- A new hot session took the id meanwhile: restoring over it is refused.
reset role;
insert into ai.agent_sessions (thread_id, owner) values ('done-b', 'tenant_b');
set local role app_service;
select throws_ok($$select ai.restore_session('done-b')$$, 'AS041',
                 'thread done-b exists among the hot sessions: it cannot be restored over them', 'no restore over a hot session');

select * from finish();
rollback;
