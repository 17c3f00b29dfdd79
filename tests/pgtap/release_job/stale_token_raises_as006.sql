\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql

select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select (ai.claim_job('w2', '1 minute')).fencing_token as new_token \gset
select throws_ok(format('select ai.release_job(%s, %s)', :id, :token), 'AS006', format('job %s: lease lost', :id), 'the zombie cannot release the job');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select lease_owner from ai.agent_jobs where job_id = :id), 'w2', 'w2 still holds it');
set local role app_service;

select * from finish();
rollback;
