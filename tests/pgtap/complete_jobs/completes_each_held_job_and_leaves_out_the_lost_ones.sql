\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as a \gset
select (ai.enqueue_job('qa2')).job_id as b \gset
set local role app_service;
select count(*) as claimed from ai.claim_jobs('w', '1 minute', 'default', 10) \gset
select results_eq(format('select * from ai.complete_jobs(array[%s, %s]::bigint[], array[1, 99]::bigint[], array[%L, %L]::jsonb[])', :a, :b, '{"n": 1}', '{"n": 2}'),
                  array[:a::bigint], 'the job with its current token is completed; the stale token''s job is left out');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select (status, result) from ai.agent_jobs where job_id = :a), ('COMPLETED'::text, '{"n": 1}'::jsonb), 'with its result');
select is((select status from ai.agent_jobs where job_id = :b), 'IN_PROGRESS', 'the other is untouched');
set local role app_service;
select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset
select is_empty(format('select * from ai.complete_jobs(array[%s]::bigint[], array[1]::bigint[])', :b), 'an expired lease is left out too');

select * from finish();
rollback;
