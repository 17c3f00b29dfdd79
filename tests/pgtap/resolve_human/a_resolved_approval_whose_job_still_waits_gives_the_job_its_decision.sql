\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/side_effects.sql

select ai.request_human(:job, :token, 'c1') as approval \gset
set local role tenant_a;
select status from ai.resolve_human('qa1', 'c1', '{"approved": true}');
-- The job's half of the decision lost, the approval's kept (on a Citus formation: a coordinator
-- crash between the thread's worker's commit and its own, docs/scaling.md); here by hand.
reset role;
update ai.agent_jobs set status = 'AWAITING_HUMAN', payload = payload - 'human' where job_id = :job;
set local role tenant_a;
select is((select approval_id || ' ' || decision::text from ai.resolve_human('qa1', 'c1', '{"approved": false}')),
          :'approval' || ' {"approved": true}', 'the second click returns the decision stored then');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select status from ai.agent_jobs where job_id = :job), 'PENDING', 'the job resumes');
select is((select payload -> 'human' -> 'decision' from ai.agent_jobs where job_id = :job), '{"approved": true}'::jsonb,
          'with the first decision');
select is((select decision from ai.human_approvals where thread_id = 'qa1'), '{"approved": true}'::jsonb, 'which stands');
set local role tenant_a;
select throws_ok($$select ai.resolve_human('qa1', 'c1', '{"approved": false}')$$, 'AS033',
                 'the approval of thread qa1 at checkpoint c1 was already resolved', 'and a third click is refused as before');
select * from finish();
rollback;
