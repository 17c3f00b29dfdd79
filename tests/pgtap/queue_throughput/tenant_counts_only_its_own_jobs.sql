\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as j1 \gset
set local role tenant_b;
select (ai.enqueue_job('qb1')).job_id as j2 \gset
set local role app_service;
select count(ai.complete_job(j.job_id, j.fencing_token)) as done
from ai.claim_jobs('w', '1 hour', 'default', 10) j \gset
select set_config('ai.frozen_now', '2030-01-01 00:01:00+00', true) is not null as moved \gset

set local role tenant_a;
select is((select sum(completed) from ai.queue_throughput()), 1::numeric, 'tenant_a counts its one');
set local role tenant_b;
select is((select sum(completed) from ai.queue_throughput()), 1::numeric, 'tenant_b its one');
set local role app_service;
select is((select sum(completed) from ai.queue_throughput()), 2::numeric, 'the service both');

select * from finish();
rollback;
