\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/side_effects.sql

select ai.request_human(:job, :token, 'c1') is not null as asked \gset
set local role tenant_a;
select status from ai.resolve_human('qa1', 'c1', '{"approved": true}');
select throws_ok($$select ai.resolve_human('qa1', 'c1', '{"approved": false}')$$, 'AS033',
                 'the approval of thread qa1 at checkpoint c1 was already resolved', 'a second click');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select decision from ai.human_approvals where thread_id = 'qa1'), '{"approved": true}'::jsonb, 'the first decision stands');
select is((select payload -> 'human' -> 'decision' from ai.agent_jobs where job_id = :job), '{"approved": true}'::jsonb, 'and the job carries it');
set local role tenant_a;
select * from finish();
rollback;
