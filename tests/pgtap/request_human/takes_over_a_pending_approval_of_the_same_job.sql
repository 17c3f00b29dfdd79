\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as j1 \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as t1 \gset
select ai.request_human(:j1, :t1, 'c1') as a1 \gset
-- The job's half of the request lost, its approval kept (on a Citus formation: a coordinator crash
-- between the thread's worker's commit and its own, docs/scaling.md); here by hand.
reset role;
update ai.agent_jobs set status = 'PENDING', run_at = ai.now() where job_id = :j1;
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as t2 \gset
select is(ai.request_human(:j1, :t2, 'c2', '{"send": 1}'), :'a1',
          'the run asks again: the pending approval of its own job is taken over, not refused (AS004)');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select status from ai.agent_jobs where job_id = :j1), 'AWAITING_HUMAN', 'the job waits again');
select is((select checkpoint_id || ' ' || action::text from ai.human_approvals where approval_id = :'a1'), 'c2 {"send": 1}',
          'at the new request''s checkpoint, with its action');
select is((select count(*)::int from ai.human_approvals where thread_id = 'qa1'), 1, 'still one approval');
set local role tenant_a;
select is((select count(*)::int from ai.pending_approvals() where approval_id = :'a1'), 1, 'and it is pending again');
set local role app_service;
select * from finish();
rollback;
