\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

\ir ../fixtures/queue_held.sql
-- job 2 (qa2): held by w1, but the call names a stale token; job 3 (qb1): held by w2, not w1
set local role tenant_a;
select (ai.enqueue_job('qa2')).job_id as id2 \gset
set local role tenant_b;
select (ai.enqueue_job('qb1')).job_id as id3 \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as token2 \gset
select (ai.claim_job('w2', '1 minute')).fencing_token as token3 \gset

select set_config('ai.frozen_now', '2030-01-01 00:00:30+00', true) is not null as moved \gset
select results_eq(
  format('select job_id from ai.renew_leases(%L, array[%s, %s, %s, 999999], array[%s, %s, %s, 1], %L)',
         'w1', :id, :id2, :id3, :token, :token2 - 1, :token3, '1 minute'),
  format('values (%s::bigint)', :id),
  'only the lease w1 holds with the current token is renewed: a stale token, another worker''s job and an unknown job are left out');
reset role;  -- assertions on tables run as the superuser (no role holds a table privilege)
select is((select array_agg(lease_expires_at order by job_id) from ai.agent_jobs where job_id in (:id2, :id3)),
          array['2030-01-01 00:01:00+00'::timestamptz, '2030-01-01 00:01:00+00'::timestamptz],
          'the leases left out are unchanged');
set local role app_service;

-- past its end a lease is lost even if nobody took the job yet; a finished job is not renewed either
select ai.complete_job(:id2, :token2) is not null as completed \gset
select set_config('ai.frozen_now', '2030-01-01 00:01:50+00', true) is not null as moved \gset
select is((select count(*)::int from ai.renew_leases('w1', array[:id2, :id3], array[:token2, :token3], '1 minute')), 0,
          'an expired lease and a completed job are not renewed');

select * from finish();
rollback;
