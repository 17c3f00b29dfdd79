\ir ../fixtures/helpers.sql
begin;
select plan(1);
\ir ../fixtures/queue.sql

set local role tenant_a;
select count(ai.enqueue_job('qa1')) from generate_series(1, 2) \gset
reset role;
update ai.agent_jobs set status = 'IN_PROGRESS', lease_owner = 'w', lease_expires_at = '2030-01-01 00:01'
where job_id = (select min(job_id) from ai.agent_jobs);
select throws_ok($$update ai.agent_jobs set status = 'IN_PROGRESS', lease_owner = 'w', lease_expires_at = '2030-01-01 00:01'
                   where job_id = (select max(job_id) from ai.agent_jobs)$$,
                 '23505', null, 'even a raw UPDATE cannot run a second job of the thread: the unique index refuses it');

select * from finish();
rollback;
