\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1', max_attempts => 1)).job_id as id \gset
set local role app_service;
select (ai.claim_job('w')).fencing_token as token \gset
select ai.fail_job(:id, :token, 'fatal') is not null as failed \gset
select set_config('ai.frozen_now', '2030-01-01 01:00:00+00', true) is not null as moved \gset
create temp table r on commit drop as select * from ai.retry_dead_job(:id);
select is((status, attempts, run_at, finished_at), ('PENDING'::text, 0, '2030-01-01 01:00:00+00'::timestamptz, null::timestamptz), 'PENDING, due now, attempts reset') from r;
select is(last_error, 'fatal', 'the last error is kept') from r;
select is((select (attempts, fencing_token) from ai.claim_job('w')), (1, 2::bigint), 'claimed again under a new token');
select throws_ok(format('select ai.complete_job(%s, %s)', :id, :token), 'AS006', format('job %s: lease lost', :id), 'the dead attempt''s token stays refused');

select * from finish();
rollback;
