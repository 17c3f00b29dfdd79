\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1', '[1, 2]')).job_id as arr \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as t1 \gset
select throws_ok(format($$select ai.request_human(%s, %s, 'c1')$$, :arr, :t1), 'AS002',
                 format('job %s: only a job whose payload is a JSON object can wait for a person (the decision is added to it)', :arr),
                 'a payload that is not an object cannot carry a decision');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select status from ai.agent_jobs where job_id = :arr), 'IN_PROGRESS', 'and the job is still held');
set local role app_service;
select ai.complete_job(:arr, :t1) is not null as done \gset

-- two jobs of one thread: while the first waits, the second may run, but cannot wait as well
set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as j1 \gset
select (ai.enqueue_job('qa1')).job_id as j2 \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as t2 \gset
select ai.request_human(:j1, :t2, 'c1') is not null as asked \gset
select (ai.claim_job('w1', '1 minute')).fencing_token as t3 \gset
select throws_ok(format($$select ai.request_human(%s, %s, 'c1')$$, :j2, :t3), 'AS004', 'thread qa1 already waits for a person',
                 'one pending approval per thread');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select status from ai.agent_jobs where job_id = :j2), 'IN_PROGRESS', 'the second job is unchanged');
set local role app_service;
select * from finish();
rollback;
