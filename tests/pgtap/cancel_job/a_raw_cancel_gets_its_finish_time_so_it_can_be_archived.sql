\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/queue.sql
select plan(3);

-- archive_jobs moves finished jobs by finished_at; a raw UPDATE to CANCELLED (by the schema owner:
-- tenants hold no table privilege) sets only the status, and must not leave a job that is never archived.
set local role tenant_a;
select ai.enqueue_job('qa1', '{}', 'q') as job \gset
reset role;
update ai.agent_jobs set status = 'CANCELLED' where job_id = (:'job'::ai.agent_jobs).job_id;
select is((select finished_at from ai.agent_jobs where job_id = (:'job'::ai.agent_jobs).job_id),
          '2030-01-01 00:00:00+00'::timestamptz, 'the raw cancel got its finish time from ai.now()');

reset role;
select set_config('ai.frozen_now', '2030-01-03 00:00:00+00', true) is not null as moved \gset
set local role app_service;
select is(ai.archive_jobs('1 day', 100), 1, 'and archive_jobs moves it two days later');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select status from ai.agent_jobs_archive where job_id = (:'job'::ai.agent_jobs).job_id), 'CANCELLED',
          'into the archive, cancelled');
set local role app_service;

select * from finish();
rollback;
