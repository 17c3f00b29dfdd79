\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1', '{"n": 1}', idempotency_key => 'k1')).job_id as first \gset
select is((ai.enqueue_job('qa1', '{"n": 2}', idempotency_key => 'k1')).job_id, :first::bigint, 'the same key in the same queue returns the first job');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select payload from ai.agent_jobs where job_id = :first), '{"n": 1}'::jsonb, 'unchanged');
set local role tenant_a;
select isnt((ai.enqueue_job('qa1', '{}', 'other', idempotency_key => 'k1')).job_id, :first::bigint, 'another queue: another job');
set local role tenant_b;
select isnt((ai.enqueue_job('qb1', '{}', idempotency_key => 'k1')).job_id, :first::bigint, 'another owner: another job (keys are per owner)');
reset role;
select is((select count(*)::int from ai.agent_jobs), 3, 'three jobs in all');

select * from finish();
rollback;
