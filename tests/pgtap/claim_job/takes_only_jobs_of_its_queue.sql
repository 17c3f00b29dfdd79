\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1', '{}', 'mail')).job_id as mail \gset
set local role app_service;
select is((select count(*)::int from ai.claim_job('w')), 0, 'the default queue is empty');
select is((select job_id from ai.claim_job('w', '1 minute', 'mail')), :mail::bigint, 'the mail queue has the job');

select * from finish();
rollback;
