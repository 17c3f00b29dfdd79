\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1', priority => 9)).job_id as first \gset
select (ai.enqueue_job('qa1', priority => 8)).job_id as second \gset
select (ai.enqueue_job('qa2', priority => 0)).job_id as other \gset
set local role app_service;
select is((select job_id from ai.claim_job('w1')), :first::bigint, 'the first job of qa1');
select is((select job_id from ai.claim_job('w2')), :other::bigint, 'qa1 is busy: its second job waits and the next thread''s job goes');
select is((select count(*)::int from ai.claim_job('w3')), 0, 'nothing else may run');
select ai.complete_job(:first, 1) is not null as done \gset
select is((select job_id from ai.claim_job('w3')), :second::bigint, 'once the first is done the second runs');

select * from finish();
rollback;
