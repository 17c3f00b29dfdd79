\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/retention.sql
set local role app_service;
select count(*) from ai.archive_sessions('90 days');

set local role tenant_a;
select results_eq($$select thread_id from ai_archive.agent_sessions$$, array['done-a'], 'tenant_a reads its own archived session');
select results_eq($$select distinct thread_id from ai_archive.session_messages$$, array['done-a'], 'and only its own archived messages');
select throws_ok($$delete from ai_archive.agent_sessions$$, '42501', null, 'a tenant cannot delete from the archive');

select * from finish();
rollback;
