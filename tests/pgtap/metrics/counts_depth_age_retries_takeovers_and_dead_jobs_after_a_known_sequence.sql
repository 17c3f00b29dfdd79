\ir ../fixtures/helpers.sql
begin;
select plan(6);
\ir ../fixtures/queue.sql
delete from ai.side_effects;

-- tenant_a: a job due an hour ago (default) and one on mail; tenant_b: one that may run once
set local role tenant_a;
select (ai.enqueue_job('qa1', run_at => '2029-12-31 23:00')).job_id as j1 \gset
select (ai.enqueue_job('qa2', '{}', 'mail')).job_id as j2 \gset
set local role tenant_b;
select (ai.enqueue_job('qb1', run_at => '2029-12-31 23:30', max_attempts => 1)).job_id as j3 \gset

set local role app_service;
select is((select value from ai.metrics() where metric = 'agent_state_oldest_due_job_age_seconds' and labels = '{"queue": "default"}'),
          3600::double precision, 'the oldest due job of default has waited an hour');
-- mail: claimed, its worker dies, another claim takes it over after the lease, and completes it
select (ai.claim_job('w1', '1 minute', 'mail')).fencing_token as t_dead \gset
select set_config('ai.frozen_now', '2030-01-01 00:02:00+00', true) is not null as moved \gset
select is((select value from ai.metrics() where metric = 'agent_state_leases_expired' and labels = '{"queue": "mail"}'),
          1::double precision, 'a running job whose lease ran out');
select (ai.claim_job('w2', '1 minute', 'mail')).fencing_token as t2 \gset
select ai.complete_job(:j2, :t2, '{}') is not null as done \gset
-- default: j1 fails and is retried in an hour, j3 fails for good (a dead job)
select (ai.claim_job('w1', '1 minute', 'default')).fencing_token as t1 \gset
select ai.fail_job(:j1, :t1, 'boom', '1 hour') is not null as f1 \gset
select (ai.claim_job('w1', '1 minute', 'default')).fencing_token as t3 \gset
select ai.fail_job(:j3, :t3, 'boom') is not null as f3 \gset
-- a side effect whose reservation dies and is taken over
set local role tenant_a;
select outcome from ai.begin_side_effect('qa1', 'mail-1', reservation => '1 minute') \gset
select set_config('ai.frozen_now', '2030-01-01 00:04:00+00', true) is not null as moved \gset
select taken_over from ai.begin_side_effect('qa1', 'mail-1', reservation => '1 minute') \gset
select ok(:'taken_over', 'the side effect was taken over');

set local role app_service;
select results_eq($$select metric, labels, value from ai.metrics()
                    where metric <> 'agent_state_checkpoint_bytes_per_step' order by metric, labels::text$$,
  $$values ('agent_state_attempts_deadline_exceeded', '{"queue": "default"}'::jsonb, 0::double precision),
           ('agent_state_attempts_deadline_exceeded', '{"queue": "mail"}', 0),
           ('agent_state_attempts_expired', '{"queue": "default"}', 0),
           ('agent_state_attempts_expired', '{"queue": "mail"}', 1),
           ('agent_state_attempts_failed', '{"queue": "default"}', 2),
           ('agent_state_attempts_failed', '{"queue": "mail"}', 0),
           ('agent_state_dead_jobs', '{"queue": "default"}', 1),
           ('agent_state_dead_jobs', '{"queue": "mail"}', 0),
           ('agent_state_jobs', '{"queue": "default", "state": "AWAITING_HUMAN"}', 0),
           ('agent_state_jobs', '{"queue": "default", "state": "CANCELLED"}', 0),
           ('agent_state_jobs', '{"queue": "default", "state": "FAILED"}', 1),
           ('agent_state_jobs', '{"queue": "default", "state": "IN_PROGRESS"}', 0),
           ('agent_state_jobs', '{"queue": "default", "state": "PENDING"}', 1),
           ('agent_state_jobs', '{"queue": "mail", "state": "AWAITING_HUMAN"}', 0),
           ('agent_state_jobs', '{"queue": "mail", "state": "CANCELLED"}', 0),
           ('agent_state_jobs', '{"queue": "mail", "state": "FAILED"}', 0),
           ('agent_state_jobs', '{"queue": "mail", "state": "IN_PROGRESS"}', 0),
           ('agent_state_jobs', '{"queue": "mail", "state": "PENDING"}', 0),
           ('agent_state_jobs_due', '{"queue": "default"}', 0),
           ('agent_state_jobs_due', '{"queue": "mail"}', 0),
           ('agent_state_leases_expired', '{"queue": "default"}', 0),
           ('agent_state_leases_expired', '{"queue": "mail"}', 0),
           ('agent_state_oldest_due_job_age_seconds', '{"queue": "default"}', 0),
           ('agent_state_oldest_due_job_age_seconds', '{"queue": "mail"}', 0),
           ('agent_state_side_effect_takeovers', '{}', 1),
           ('agent_state_side_effects_taken_over', '{}', 1)$$,
  'every figure after the sequence, for the service');
select is((select count(*)::int from ai.metrics() where metric = 'agent_state_checkpoint_bytes_per_step' and value < 0), 0,
          'checkpoint bytes per step, when statistics exist, are never negative');
-- the taken-over job, completed, stays where the function reads it (agent_jobs_troubled)
reset role;
select is((select count(*)::int from ai.agent_jobs j
           where j.job_id = :j2 and (j.attempts > 1 or j.status in ('FAILED', 'CANCELLED', 'AWAITING_HUMAN'))), 1,
          'the taken-over job stays in the troubled set after it completes');

select * from finish();
rollback;
