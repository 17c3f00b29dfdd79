\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/side_effects.sql

select ai.request_human(:job, :token, 'c1') as approval \gset
set local role tenant_a;
select ai.cancel_job(:job) is not null as cancelled \gset
select throws_ok($$select ai.resolve_human('qa1', 'c1', '{"approved": true}')$$, 'AS032',
                 format('thread qa1 does not wait for a person (its approval at checkpoint c1 was cancelled with job %s)', :job),
                 'resolving the checkpoint of a cancelled job says it was cancelled');
select throws_ok($$select ai.resolve_human('qa1', 'c0', '{"approved": true}')$$, 'AS032', 'thread qa1 does not wait for a person',
                 'another checkpoint: nothing waits');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select (status, decision)::text from ai.human_approvals where approval_id = :'approval'), '(cancelled,)', 'the approval stays cancelled, with no decision');
select is((select status from ai.agent_jobs where job_id = :job), 'CANCELLED', 'and the job cancelled');
set local role tenant_a;
select * from finish();
rollback;
