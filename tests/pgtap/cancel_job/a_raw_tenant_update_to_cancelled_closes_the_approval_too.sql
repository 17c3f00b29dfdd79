\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/side_effects.sql

-- A tenant's raw UPDATE is refused (it holds no table privilege); the schema owner's raw UPDATE to
-- CANCELLED meets the trigger that closes the approval, as ai.cancel_job does.
select ai.request_human(:job, :token, 'c1') as approval \gset
set local role tenant_a;
select throws_ok(format($$update ai.agent_jobs set status = 'CANCELLED' where job_id = %s$$, :job), '42501', null,
                 'a tenant''s raw UPDATE is refused');
reset role;
update ai.agent_jobs set status = 'CANCELLED', updated_at = ai.now(), finished_at = ai.now() where job_id = :job;
select is((select status from ai.agent_jobs where job_id = :job), 'CANCELLED', 'a raw UPDATE cancels the job');
select is((select (status, decided_by, decided_for)::text from ai.human_approvals where approval_id = :'approval'),
          '(cancelled,postgres,)', 'and cancels its approval (decided by the owner''s role, for no one)');
select is((select status from ai.agent_sessions where thread_id = 'qa1'), 'active', 'the session is active again');
select is((select count(*)::int from ai.session_events where thread_id = 'qa1' and kind = 'approval_cancelled'), 1, 'with one approval_cancelled event');
select * from finish();
rollback;
