\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

select set_config('ai.frozen_server_start', '2029-12-31 00:00:00+00', true) is not null as started_long_ago \gset
set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as a \gset
set local role app_service;
select ok(ai.hold_worker_liveness('w1'), 'the hold is taken');
select ok(ai.hold_worker_liveness('w1'), 'the same session takes it again');
select (ai.claim_jobs('w1', '1 hour', 'default', 1)).job_id as claimed \gset
select ai.release_worker_liveness('w1') is null as released \gset
select is((select count(*)::int from ai.claim_jobs('w2', '1 minute', 'default', 5)), 0,
          'a worker that let go of its hold cleanly is not dead: its job keeps its lease');
select throws_ok($$select ai.hold_worker_liveness('')$$, 'AS002', null, 'an empty worker_id raises AS002');

select * from finish();
rollback;
