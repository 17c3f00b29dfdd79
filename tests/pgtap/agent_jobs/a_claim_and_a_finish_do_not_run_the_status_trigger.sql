\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/queue.sql
select plan(4);

-- The queue's hot path (claim, complete) must not pay for the status trigger: its WHEN clause is
-- false for both. Moves to CANCELLED or PENDING, and a tenant's raw writes, do run it.
set local track_functions = 'pl';
set local role tenant_a;
select ai.enqueue_job('qa1', '{}', 'q') is not null as queued \gset
select ai.enqueue_job('qa2', '{}', 'q') is not null as queued \gset
set local role app_service;
select job_id, fencing_token from ai.claim_job('w', '60 seconds', 'q') \gset
select ai.complete_job(:job_id, :fencing_token) is not null as done \gset
select job_id as second, fencing_token as second_token from ai.claim_job('w', '60 seconds', 'q') \gset
select ai.fail_job(:second, :second_token, 'boom', '1 second') is not null as failed \gset
reset role;
select is(pg_stat_get_xact_function_calls('ai._job_status_moved()'::regprocedure), 1::bigint,
          'two claims and a complete ran no trigger; the failure that put a job back to PENDING ran it once');

set local role tenant_a;
select throws_ok(format($$update ai.agent_jobs set status = 'COMPLETED' where job_id = %s$$, :second), 'AS004', null,
                 'a tenant''s raw UPDATE to COMPLETED still meets the trigger');
select throws_ok(format($$update ai.agent_jobs set status = 'IN_PROGRESS', lease_owner = 'me' where job_id = %s$$, :second),
                 '42501', null, 'and a tenant cannot write lease_owner, which the trigger''s WHEN clause relies on');
select lives_ok(format($$update ai.agent_jobs set status = 'CANCELLED' where job_id = %s$$, :second),
                'a tenant may cancel its job');

select * from finish();
rollback;
