\ir ../fixtures/helpers.sql
begin;
select plan(6);
\ir ../fixtures/side_effects.sql

set local role tenant_a;
select throws_ok($$select ai.resolve_human('qa2', 'c1', '{}')$$, 'AS032', 'thread qa2 does not wait for a person', 'nothing ever waited');
reset role;
set local role app_service;
select ai.request_human(:job, :token, 'c1') is not null as asked \gset
-- A raw UPDATE (by the schema owner) may put a waiting job back to PENDING without a decision;
-- its approval is then pending with nothing waiting on it.
-- (A cancel closes the approval: see after_a_cancel_raises_as032_naming_the_cancelled_approval.sql.)
reset role;
update ai.agent_jobs set status = 'PENDING' where job_id = :job;
set local role tenant_a;
select throws_ok($$select ai.resolve_human('qa1', 'c1', '{}')$$, 'AS032',
                 format('thread qa1 does not wait for a person (job %s is no longer AWAITING_HUMAN)', :job), 'the job no longer waits');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select status from ai.human_approvals where thread_id = 'qa1'), 'pending', 'the approval is unchanged');
set local role tenant_a;
select is((select count(*)::int from ai.pending_approvals()), 0, 'and no longer listed as waiting');
select ai.set_session_status('qa1', 'active') is not null as active \gset
select throws_ok($$select ai.resolve_human('qa1', 'c1', '{}')$$, 'AS032',
                 'thread qa1 does not wait for a person (the session is active)', 'the session is not waiting');
select throws_ok($$select ai.resolve_human('qa1', 'c1', null)$$, 'AS002', 'decision must not be NULL', 'NULL decision');
select * from finish();
rollback;
