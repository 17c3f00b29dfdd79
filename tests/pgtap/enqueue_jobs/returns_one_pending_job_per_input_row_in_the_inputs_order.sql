\ir ../fixtures/helpers.sql
begin;
select plan(6);
\ir ../fixtures/queue.sql

set local role tenant_a;
create temp table got as
select * from ai.enqueue_jobs(array['qa1', 'qa2', 'qa1'], array['{"n": 1}', '{"n": 2}', '{"n": 3}']::jsonb[], 'batch',
                              run_ats => array[null, '2030-01-02 00:00:00+00', null]::timestamptz[],
                              priorities => array[0, 7, 0]);
reset role;
select is((select array_agg(payload->>'n' order by job_id) from got), array['1', '2', '3'], 'one job per row, ids in the input''s order');
select is((select count(*)::int from ai.agent_jobs where queue = 'batch'), 3, 'all three stored');
select ok((select bool_and(status = 'PENDING' and owner = 'tenant_a' and max_attempts = 5) from got), 'PENDING, the session''s owner, max_attempts for all');
select is((select run_at from got where payload->>'n' = '1'), '2030-01-01 00:00:00+00'::timestamptz, 'run_at NULL: now');
select is((select (run_at, priority)::text from got where payload->>'n' = '2'), ('2030-01-02 00:00:00+00'::timestamptz, 7)::text, 'its own run_at and priority');
select is((select count(*)::int from ai.enqueue_jobs('{}'::text[], '{}'::jsonb[])), 0, 'an empty batch: nothing');

select * from finish();
rollback;
