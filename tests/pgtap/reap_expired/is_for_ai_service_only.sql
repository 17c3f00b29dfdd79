\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

set local role tenant_a;
select throws_ok($$select ai.reap_expired()$$, '42501', 'permission denied for function reap_expired', 'tenants do not reap');
select throws_ok($$select ai.archive_jobs()$$, '42501', 'permission denied for function archive_jobs', 'nor archive');

select * from finish();
rollback;
