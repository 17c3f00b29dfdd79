\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa2')).job_id as running \gset
set local role app_service;
select (ai.claim_job('w', '1 minute', 'default')).job_id as claimed \gset
set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as pending \gset
select is((ai.cancel_job(:pending)).status, 'CANCELLED', 'the owner cancels a PENDING job');
create temp table c on commit drop as select * from ai.cancel_job(:running);
select is(status, 'CANCELLED', 'and an IN_PROGRESS one') from c;
select is((finished_at, lease_owner), ('2030-01-01 00:00:00+00'::timestamptz, 'w'::text), 'finished now; lease_owner tells who was running it') from c;

select * from finish();
rollback;
