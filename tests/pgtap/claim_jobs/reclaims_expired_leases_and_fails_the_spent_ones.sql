\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1', max_attempts => 1)).job_id as spent \gset
select (ai.enqueue_job('qa2', max_attempts => 2)).job_id as retried \gset
set local role app_service;
select count(*) from ai.claim_jobs('w1', '1 minute', 'default', 10) \gset
select set_config('ai.frozen_now', '2030-01-01 00:02:00+00', true) is not null as moved \gset
select results_eq($$select job_id from ai.claim_jobs('w2', '1 minute', 'default', 10)$$, array[:retried::bigint], 'only the job with an attempt left is handed out');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select (status, attempts, finished_at) from ai.agent_jobs where job_id = :spent), ('FAILED'::text, 1, '2030-01-01 00:02:00+00'::timestamptz), 'the spent one is FAILED');
select is((select (attempts, fencing_token) from ai.agent_jobs where job_id = :retried), (2, 2::bigint), 'the other is attempt 2 under token 2');
set local role app_service;

select * from finish();
rollback;
