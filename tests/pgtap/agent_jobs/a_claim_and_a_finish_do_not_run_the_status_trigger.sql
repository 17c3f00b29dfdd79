\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/queue.sql
select plan(4);

-- The queue's hot path (claim, complete) must not pay for the status trigger: its WHEN clause is
-- false for both (and for fail, release, reap). Cancels do run it; a tenant holds no privilege on the table.
set local track_functions = 'pl';
set local role tenant_a;
select ai.enqueue_job('qa1', '{}', 'q') is not null as queued \gset
select ai.enqueue_job('qa2', '{}', 'q') is not null as queued \gset
set local role app_service;
select job_id, fencing_token from ai.claim_job('w', '60 seconds', 'q') \gset
select ai.complete_job(:job_id, :fencing_token) is not null as done \gset
select job_id as second, fencing_token as second_token from ai.claim_job('w', '60 seconds', 'q') \gset
select ai.fail_job(:second, :second_token, 'boom', '0 seconds') is not null as failed \gset
select job_id as second, fencing_token as second_token from ai.claim_job('w', '60 seconds', 'q') \gset
select ai.cancel_job(:second) is not null as cancelled \gset
reset role;
select is(pg_stat_get_xact_function_calls('ai._job_status_moved()'::regprocedure), 1::bigint,
          'three claims, a complete and a failure ran no trigger; the cancel ran it once');

set local role tenant_a;
select throws_ok(format($$update ai.agent_jobs set status = 'COMPLETED' where job_id = %s$$, :second), '42501', null,
                 'a tenant''s raw UPDATE to COMPLETED is refused (no table privilege)');
select throws_ok(format($$update ai.agent_jobs set status = 'IN_PROGRESS', lease_owner = 'me' where job_id = %s$$, :second),
                 '42501', null, 'and a tenant cannot write lease_owner, which the trigger''s WHEN clause relies on');
select throws_ok(format($$update ai.agent_jobs set status = 'PENDING' where job_id = %s$$, :second), '42501', null,
                 'nor revive a cancelled one');

select * from finish();
rollback;
