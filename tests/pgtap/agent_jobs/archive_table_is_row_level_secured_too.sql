\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as a \gset
select ai.cancel_job(:a) is not null as c \gset
set local role tenant_b;
select (ai.enqueue_job('qb1')).job_id as b \gset
select ai.cancel_job(:b) is not null as c \gset
set local role app_service;
select set_config('ai.frozen_now', '2030-01-03 00:00:00+00', true) is not null as moved \gset
select is(ai.archive_jobs('1 day', 100), 2, 'both archived');
reset role;
set local role tenant_a;
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select results_eq(format('select owner from ai.agent_jobs_archive where job_id in (%s, %s) order by owner', :a, :b),
                  array['tenant_a', 'tenant_b'], 'each archived job keeps its owner');
select ok((select relforcerowsecurity from pg_class where oid = 'ai.agent_jobs_archive'::regclass), 'RLS forced');
set local role tenant_a;
set local role tenant_a;

select * from finish();
rollback;
