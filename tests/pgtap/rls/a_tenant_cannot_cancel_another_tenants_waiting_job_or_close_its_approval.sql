\ir ../fixtures/helpers.sql
begin;
select plan(6);
\ir ../fixtures/side_effects.sql

select ai.request_human(:job, :token, 'c1') as approval \gset
set local role tenant_b;
select throws_ok(format('select ai.cancel_job(%s)', :job), 'AS001', format('job %s not found', :job), 'tenant_b cannot cancel tenant_a''s waiting job');
reset role;
select is((select status from ai.agent_jobs where job_id = :job), 'AWAITING_HUMAN', 'the job still waits');
select is((select status from ai.human_approvals where approval_id = :'approval'), 'pending', 'its approval is still pending');
select is((select status from ai.agent_sessions where thread_id = 'qa1'), 'waiting', 'the session still waits');
select is((select count(*)::int from ai.session_events where thread_id = 'qa1' and kind = 'approval_cancelled'), 0, 'no approval_cancelled event');
select is((select count(*)::int from ai.pending_approvals() where thread_id = 'qa1'), 1, 'and tenant_a still sees it waiting');
select * from finish();
rollback;
