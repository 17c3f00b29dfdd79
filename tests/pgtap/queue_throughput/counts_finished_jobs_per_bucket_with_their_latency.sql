\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

-- 00:00 enqueued, 00:02 completed (2 min); 00:02 enqueued, 00:07 failed (5 min); 00:07 enqueued,
-- 00:08 completed (1 min); one still PENDING. Buckets of 5 minutes: 00:00 and 00:05.
set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as j1 \gset
set local role app_service;
select fencing_token as t1 from ai.claim_job('w', '1 hour', 'default') \gset
select set_config('ai.frozen_now', '2030-01-01 00:02:00+00', true) is not null as moved \gset
select (ai.complete_job(:j1, :t1)).status as s1 \gset
set local role tenant_a;
select (ai.enqueue_job('qa2', '{}', 'default', null, 0, 1)).job_id as j2 \gset
set local role app_service;
select fencing_token as t2 from ai.claim_job('w', '1 hour', 'default') \gset
select set_config('ai.frozen_now', '2030-01-01 00:07:00+00', true) is not null as moved \gset
select (ai.fail_job(:j2, :t2, 'boom')).status as s2 \gset
set local role tenant_b;
select (ai.enqueue_job('qb1')).job_id as j3 \gset
set local role app_service;
select fencing_token as t3 from ai.claim_job('w', '1 hour', 'default') \gset
select set_config('ai.frozen_now', '2030-01-01 00:08:00+00', true) is not null as moved \gset
select (ai.complete_job(:j3, :t3)).status as s3 \gset
set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as j4 \gset
set local role app_service;
select set_config('ai.frozen_now', '2030-01-01 00:10:00+00', true) is not null as moved \gset

select results_eq(
  $$ select queue, bucket_start, completed, failed, mean_latency, max_latency from ai.queue_throughput('default') $$,
  $$ values ('default', '2030-01-01 00:00:00+00'::timestamptz, 1::bigint, 0::bigint, interval '2 min', interval '2 min'),
            ('default', '2030-01-01 00:05:00+00'::timestamptz, 1::bigint, 1::bigint, interval '3 min', interval '5 min') $$,
  'per 5-minute bucket: completed, failed, mean and longest enqueue-to-finish; the pending job is not counted');
select is((select count(*) from ai.queue_throughput('default', '5 minutes', '5 minutes')), 1::bigint,
  'since 00:05 (the bucket holding now - since): the older bucket is left out');

select * from finish();
rollback;
