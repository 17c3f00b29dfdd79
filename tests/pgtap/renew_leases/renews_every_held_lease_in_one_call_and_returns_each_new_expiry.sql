\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql
-- a second job held by w1 (thread qa2)
set local role tenant_a;
select (ai.enqueue_job('qa2')).job_id as id2 \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as token2 \gset

select set_config('ai.frozen_now', '2030-01-01 00:00:40+00', true) is not null as moved \gset
select results_eq(
  format('select job_id, lease_expires_at from ai.renew_leases(%L, array[%s, %s], array[%s, %s], %L) order by job_id',
         'w1', :id, :id2, :token, :token2, '1 minute'),
  format('values (%s::bigint, %L::timestamptz), (%s::bigint, %L::timestamptz)',
         :id, '2030-01-01 00:01:40+00', :id2, '2030-01-01 00:01:40+00'),
  'both leases now end a minute after ai.now(), one row per renewed job');
reset role;  -- assertions on tables run as the superuser (no role holds a table privilege)
select is((select array_agg((lease_expires_at, available_at)::text order by job_id) from ai.agent_jobs where job_id in (:id, :id2)),
          array[('2030-01-01 00:01:40+00'::timestamptz, '2030-01-01 00:01:40+00'::timestamptz)::text,
                ('2030-01-01 00:01:40+00'::timestamptz, '2030-01-01 00:01:40+00'::timestamptz)::text],
          'stored, and the jobs are claimable only then');
set local role app_service;
reset role;  -- assertions on tables run as the superuser (no role holds a table privilege)
select is((select array_agg((fencing_token, attempts, status)::text order by job_id) from ai.agent_jobs where job_id in (:id, :id2)),
          array[(:token::bigint, 1, 'IN_PROGRESS')::text, (:token2::bigint, 1, 'IN_PROGRESS')::text],
          'same tokens, same attempts, still in progress');
set local role app_service;
select set_config('ai.frozen_now', '2030-01-01 00:01:30+00', true) is not null as moved \gset
select is((select count(*)::int from ai.claim_jobs('w2', '1 minute', 'default', 10)), 0, 'past the first lease the renewed jobs are still held');

select * from finish();
rollback;
