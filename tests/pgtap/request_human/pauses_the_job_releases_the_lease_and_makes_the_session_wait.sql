\ir ../fixtures/helpers.sql
begin;
select plan(7);
\ir ../fixtures/side_effects.sql

select ai.request_human(:job, :token, 'c1', '{"send": "refund"}') as approval \gset
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select (status, lease_owner, lease_expires_at, attempts)::text from ai.agent_jobs where job_id = :job),
          '(AWAITING_HUMAN,,,0)', 'the job awaits a person, with no lease and the attempt given back');
select is((select status from ai.agent_sessions where thread_id = 'qa1'), 'waiting', 'the session waits');
select is((select payload from ai.session_events where thread_id = 'qa1' and kind = 'pending_approval'),
          jsonb_build_object('approval_id', :'approval', 'job_id', :job, 'checkpoint_id', 'c1', 'action', '{"send": "refund"}'::jsonb),
          'a pending_approval event records the staged action and the checkpoint');
select is((select (status, owner, requested_by, checkpoint_id)::text from ai.human_approvals where approval_id = :'approval'),
          '(pending,tenant_a,w1,c1)', 'a pending approval of the owner, requested by the worker');
set local role app_service;
select is((select count(*)::int from ai.claim_job('w2', '1 minute')), 0, 'no claim takes a job that awaits a person');
select throws_ok(format('select ai.renew_lease(%s, %s)', :job, :token), 'AS006', format('job %s: lease lost', :job), 'the pausing worker holds nothing any more');
select set_config('ai.frozen_now', '2030-01-03 00:00:00+00', true) is not null as moved \gset
select is((select count(*)::int from ai.claim_job('w2', '1 minute')), 0, 'nor two days later');
select * from finish();
rollback;
