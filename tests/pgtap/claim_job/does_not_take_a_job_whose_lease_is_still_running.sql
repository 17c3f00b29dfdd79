\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/queue.sql

set local role tenant_a;
select ai.enqueue_job('qa1') is not null as queued \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).job_id is not null as claimed \gset
select set_config('ai.frozen_now', '2030-01-01 00:00:59+00', true) is not null as moved \gset
select is((select count(*)::int from ai.claim_job('w2')), 0, 'a lease one second from its end is still held');

select * from finish();
rollback;
