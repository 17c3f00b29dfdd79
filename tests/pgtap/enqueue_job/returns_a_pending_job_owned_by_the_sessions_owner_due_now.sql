\ir ../fixtures/helpers.sql
begin;
select plan(7);
\ir ../fixtures/queue.sql

set local role tenant_a;
create temp table j on commit drop as select * from ai.enqueue_job('qa1', '{"step": 1}');
select is(status, 'PENDING', 'the job is PENDING') from j;
select is(owner, 'tenant_a', 'owned by the session''s owner') from j;
select is(run_at, '2030-01-01 00:00:00+00'::timestamptz, 'run_at defaults to ai.now()') from j;
select is(payload, '{"step": 1}'::jsonb, 'payload kept') from j;
select is((queue, priority, attempts, max_attempts, fencing_token), ('default'::text, 0, 0, 5, 0::bigint), 'defaults: queue default, priority 0, 0 of 5 attempts, token 0') from j;
select is((lease_owner, lease_expires_at, result, finished_at), (null::text, null::timestamptz, null::jsonb, null::timestamptz), 'no lease, no result, not finished') from j;
select is((ai.enqueue_job('qa1', '{}', 'mail', '2030-01-02', 7, 2)).available_at, '2030-01-02 00:00:00+00'::timestamptz, 'a scheduled job is available at its run_at');

select * from finish();
rollback;
