\ir ../fixtures/helpers.sql
begin;
\ir ../fixtures/queue.sql
select plan(4);

-- The row CHECK calls ai._check_job_row only for a row that breaks a rule: an enqueue, a claim and
-- a complete never call it; a bad row still gets the message that names its rule.
set local track_functions = 'pl';
set local role tenant_a;
select ai.enqueue_job('qa1', '{}', 'q') is not null as queued \gset
set local role app_service;
select job_id, fencing_token from ai.claim_job('w', '60 seconds', 'q') \gset
select ai.complete_job(:job_id, :fencing_token) is not null as done \gset
reset role;
select is(coalesce(pg_stat_get_xact_function_calls('ai._check_job_row(text, text, integer, integer, text, text, timestamptz)'::regprocedure), 0),
          0::bigint, 'an enqueue, a claim and a complete wrote three valid rows and called no check function');

select throws_ok(format($$update ai.agent_jobs set status = 'IN_PROGRESS' where job_id = %s$$, :job_id),
                 '23514', 'an IN_PROGRESS job has a lease owner and a lease expiry', 'a running job without a lease is refused by name');
select throws_ok(format($$update ai.agent_jobs set attempts = -1 where job_id = %s$$, :job_id),
                 '23514', 'attempts must be 0 or more and max_attempts 1 or more, not -1 and 5', 'negative attempts are refused by name');
select throws_ok($$insert into ai.agent_jobs (thread_id, owner, queue, run_at, created_at, updated_at)
                   values ('qa1', 'tenant_a', '', now(), now(), now())$$,
                 '23514', 'a queue name has 1 to 255 characters', 'a raw insert with an empty queue name is refused by name');

select * from finish();
rollback;
