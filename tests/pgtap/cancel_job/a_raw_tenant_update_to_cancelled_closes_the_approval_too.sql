\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/side_effects.sql

-- The queue's guard lets a tenant cancel its job with a raw UPDATE; the trigger that closes the
-- approval fires for that as it does for ai.cancel_job.
select ai.request_human(:job, :token, 'c1') as approval \gset
set local role tenant_a;
update ai.agent_jobs set status = 'CANCELLED', updated_at = ai.now(), finished_at = ai.now() where job_id = :job;
select is((select status from ai.agent_jobs where job_id = :job), 'CANCELLED', 'a raw UPDATE cancels the job');
select is((select (status, decided_by, decided_for)::text from ai.human_approvals where approval_id = :'approval'),
          '(cancelled,tenant_a,tenant_a)', 'and cancels its approval');
select is((select status from ai.agent_sessions where thread_id = 'qa1'), 'active', 'the session is active again');
select is((select count(*)::int from ai.session_events where thread_id = 'qa1' and kind = 'approval_cancelled'), 1, 'with one approval_cancelled event');
select * from finish();
rollback;
