\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/side_effects.sql

-- Only a waiting session goes back to active: one its owner finished meanwhile stays finished.
select ai.request_human(:job, :token, 'c1') as approval \gset
set local role tenant_a;
select ai.set_session_status('qa1', 'completed') is not null as completed \gset
select lives_ok(format('select ai.cancel_job(%s)', :job), 'the job of a completed session can still be cancelled');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select status from ai.human_approvals where approval_id = :'approval'), 'cancelled', 'its approval is cancelled');
select is((select status from ai.agent_sessions where thread_id = 'qa1'), 'completed', 'the session stays completed');
set local role tenant_a;
select * from finish();
rollback;
