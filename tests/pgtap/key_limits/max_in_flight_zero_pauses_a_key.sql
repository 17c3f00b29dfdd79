\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

set local role app_service;
select ai.set_job_key('default', '@tenant_a', max_in_flight => 0) is not null as set \gset
set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as a_job \gset
set local role app_service;
select is_empty($$select * from ai.claim_job('w')$$, 'claim_job takes nothing of a paused key');
select is_empty($$select * from ai.claim_jobs('w', '1 minute', 'default', 10)$$, 'nor does claim_jobs');

select * from finish();
rollback;
