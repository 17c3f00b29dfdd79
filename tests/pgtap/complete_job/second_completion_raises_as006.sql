\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

select ai.complete_job(:id, :token, '{"n": 1}') is not null as done \gset
select throws_ok(format('select ai.complete_job(%s, %s, %L)', :id, :token, '{"n": 2}'), 'AS006', format('job %s: lease lost', :id), 'a job completes once');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select result from ai.agent_jobs where job_id = :id), '{"n": 1}'::jsonb, 'the first result stays');
set local role app_service;

select * from finish();
rollback;
