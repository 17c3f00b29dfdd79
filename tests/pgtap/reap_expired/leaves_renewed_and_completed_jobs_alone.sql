\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as renewed \gset
select (ai.enqueue_job('qa2')).job_id as done \gset
set local role app_service;
select (ai.claim_job('w')).fencing_token as t1 \gset
select (ai.claim_job('w')).fencing_token as t2 \gset
select set_config('ai.frozen_now', '2030-01-01 00:00:50+00', true) is not null as moved \gset
select ai.renew_lease(:renewed, :t1) is not null as r \gset
select ai.complete_job(:done, :t2) is not null as c \gset
select set_config('ai.frozen_now', '2030-01-01 00:01:10+00', true) is not null as moved \gset
select is(ai.reap_expired(), 0, 'a renewed lease and a completed job are not expired');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select status from ai.agent_jobs where job_id = :done), 'COMPLETED', 'the completed job stays completed');
set local role app_service;

select * from finish();
rollback;
