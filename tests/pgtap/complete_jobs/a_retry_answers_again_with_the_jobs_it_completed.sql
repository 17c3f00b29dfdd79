\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as a \gset
select (ai.enqueue_job('qa2')).job_id as b \gset
set local role app_service;
select count(*) as claimed from ai.claim_jobs('w', '1 minute', 'default', 10) \gset
-- The first call completes a; its answer is lost. The retry sends a and b with their tokens.
select ai.complete_jobs(array[:a]::bigint[], array[1]::bigint[], array['{"n": 1}']::jsonb[]) is not null as first \gset
select set_config('ai.frozen_now', '2030-01-01 00:00:05+00', true) is not null as moved \gset
select bag_eq(format('select * from ai.complete_jobs(array[%s, %s]::bigint[], array[1, 1]::bigint[], array[%L, %L]::jsonb[])', :a, :b, '{"n": 9}', '{"n": 2}'),
              format('values (%s::bigint), (%s::bigint)', :a, :b), 'the retry answers with both: a completed before, b now');
select is((ai.get_job(:a)).result, '{"n": 1}'::jsonb, 'a keeps its first result');
select is_empty(format('select * from ai.complete_jobs(array[%s]::bigint[], array[2]::bigint[])', :a), 'another token is not answered');

select * from finish();
rollback;
