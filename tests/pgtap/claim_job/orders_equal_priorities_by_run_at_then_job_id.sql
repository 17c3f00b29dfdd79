\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1', run_at => '2029-12-31 23:00')).job_id as later \gset
select (ai.enqueue_job('qa2', run_at => '2029-12-31 22:00')).job_id as earlier \gset
set local role tenant_b;
select (ai.enqueue_job('qb1', run_at => '2029-12-31 22:00')).job_id as earlier_too \gset
set local role app_service;
select is((select job_id from ai.claim_job('w')), :earlier::bigint, 'the earliest run_at first, lower job_id breaking the tie');
select is((select job_id from ai.claim_job('w')), :earlier_too::bigint, 'then the same run_at with the higher job_id');
select is((select job_id from ai.claim_job('w')), :later::bigint, 'then the later run_at');

select * from finish();
rollback;
