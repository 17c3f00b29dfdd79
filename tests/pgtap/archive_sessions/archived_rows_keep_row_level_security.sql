\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/retention.sql
set local role app_service;
select count(*) from ai.archive_sessions('90 days');

reset role;
select results_eq($$select thread_id, owner from ai_archive.agent_sessions order by thread_id$$,
                  $$values ('done-a', 'tenant_a'), ('done-b', 'tenant_b')$$, 'archived sessions keep their owners');
select ok((select bool_and(relrowsecurity and relforcerowsecurity) from pg_class where relnamespace = 'ai_archive'::regnamespace and relkind = 'r'),
          'RLS is forced on every archive table');
set local role tenant_a;
select throws_ok($$select * from ai_archive.agent_sessions$$, '42501', null, 'a tenant cannot read the archive directly');

select * from finish();
rollback;
