\ir ../fixtures/helpers.sql
begin;
select plan(8);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as a \gset
set local role tenant_b;
select (ai.enqueue_job('qb1')).job_id as b \gset
select results_eq(format('select job_id from ai.get_job(%s)', :b), array[:b::bigint], 'tenant_b sees its own job');
select throws_ok(format('select ai.get_job(%s)', :a), 'AS001', format('job %s not found', :a), 'tenant_a''s job looks unknown');
select throws_ok($$update ai.agent_jobs set fencing_token = 99$$, '42501', 'permission denied for table agent_jobs', 'tenants cannot touch fencing tokens');
select throws_ok($$update ai.agent_jobs set lease_owner = 'me'$$, '42501', 'permission denied for table agent_jobs', 'nor leases');
select throws_ok($$delete from ai.agent_jobs$$, '42501', 'permission denied for table agent_jobs', 'nor delete jobs');
select throws_ok($$insert into ai.agent_jobs (thread_id, owner, run_at, created_at, updated_at) values ('qa1', 'tenant_a', now(), now(), now())$$,
                 '42501', 'permission denied for table agent_jobs', 'nor enqueue in another tenant''s name');
select throws_ok(format('update ai.agent_jobs set status = %L, finished_at = now() where job_id = %s', 'CANCELLED', :a), '42501', null, 'nor cancel tenant_a''s job by a raw update...');
reset role;
select is((select status from ai.agent_jobs where job_id = :a), 'PENDING', '...but it changed nothing');

select * from finish();
rollback;
