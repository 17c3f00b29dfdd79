\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1', run_at => '2030-01-01 00:10')).job_id as future \gset
set local role app_service;
select is((select count(*)::int from ai.claim_job('w')), 0, 'not due yet: nothing to claim');
select set_config('ai.frozen_now', '2030-01-01 00:10:00+00', true) is not null as moved \gset
select is((select job_id from ai.claim_job('w')), :future::bigint, 'claimable once ai.now() reaches run_at');

select * from finish();
rollback;
