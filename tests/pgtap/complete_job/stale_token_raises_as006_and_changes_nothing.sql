\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select (ai.claim_job('w2', '1 minute')).fencing_token as new_token \gset
select throws_ok(format('select ai.complete_job(%s, %s, %L)', :id, :token, '{"by": "zombie"}'), 'AS006', format('job %s: lease lost', :id), 'the zombie cannot complete');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select (status, result) from ai.agent_jobs where job_id = :id), ('IN_PROGRESS'::text, null::jsonb), 'the job is still the new holder''s');
set local role app_service;

select * from finish();
rollback;
