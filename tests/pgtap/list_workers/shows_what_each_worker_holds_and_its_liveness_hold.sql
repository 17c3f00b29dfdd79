\ir ../fixtures/helpers.sql
begin;
select plan(7);
\ir ../fixtures/queue.sql
set local role tenant_a;
select ai.enqueue_job('qa1'), ai.enqueue_job('qa2');
set local role tenant_b;
select ai.enqueue_job('qb1');
set local role app_service;
select ok(ai.hold_worker_liveness('held-1'), 'the hold is taken');
select array_agg(job_id order by job_id) as ids, array_agg(fencing_token order by job_id) as tokens
from ai.claim_jobs('held-1', '1 minute', 'default', 2, 'r1') \gset
select count(*) from ai.claim_jobs('other-1', '1 minute', 'default', 2, 'r1');

select results_eq(
  $$select state, queue, jobs, cardinality(thread_ids), liveness_held, started_at from ai.list_workers() where worker = 'held-1'$$,
  $$values ('alive', 'default', 2::bigint, 2, true, '2030-01-01 00:00:00+00'::timestamptz)$$,
  'a worker holding its liveness hold: alive, its jobs and their threads');
select results_eq($$select jobs, thread_ids, liveness_held from ai.list_workers() where worker = 'other-1'$$,
                  $$values (1::bigint, array['qa2'], false)$$,
                  'the other worker holds the third job (fair shares: the first took one job of each tenant)');
select set_config('ai.frozen_now', '2030-01-01 00:00:30+00', true) is not null as moved \gset
select count(*) from ai.renew_leases('held-1', :'ids'::bigint[], :'tokens'::bigint[]);
select is((select heard_at from ai.list_workers() where worker = 'held-1'), '2030-01-01 00:00:30+00'::timestamptz,
          'a renewal is heard');
select ai.release_worker_liveness('held-1') is null as released \gset
select results_eq($$select state, liveness_held, stopped_at from ai.list_workers() where worker = 'held-1'$$,
                  $$values ('alive', false, '2030-01-01 00:00:30+00'::timestamptz)$$,
                  'a worker that let go of its hold but still holds leases is alive');
select count(*) from ai.complete_jobs(:'ids'::bigint[], :'tokens'::bigint[]);
select is((select state from ai.list_workers() where worker = 'held-1'), 'stopped',
          'once its jobs are done, a worker that let go of its hold cleanly is stopped');
-- a worker that took a hold whose connection is gone (no session holds its lock)
reset role;
update ai.queue_workers set live = true, stopped_at = null where worker_id = 'held-1';
set local role app_service;
select is((select state from ai.list_workers() where worker = 'held-1'), 'stale',
          'a worker whose liveness hold is free is stale at once');

select * from finish();
rollback;
