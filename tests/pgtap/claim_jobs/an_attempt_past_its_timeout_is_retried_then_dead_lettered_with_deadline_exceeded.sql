\ir ../fixtures/helpers.sql
begin;
select plan(7);
\ir ../fixtures/queue.sql

-- A handler that never returns, two attempts of 10 seconds each: the next claim after the first
-- deadline takes the job again (a new token), the one after the second ends it FAILED, and the
-- history says "deadline exceeded", not "lease expired".
set local role tenant_a;
select (ai.enqueue_job('qa1', max_attempts => 2, timeout => '10 seconds')).job_id as id \gset
set local role app_service;
select (ai.claim_jobs('w1', '1 minute', 'default', 10)).fencing_token as t1 \gset
select set_config('ai.frozen_now', '2030-01-01 00:00:10+00', true) is not null as moved \gset
select (ai.claim_jobs('w2', '1 minute', 'default', 10)).fencing_token as t2 \gset
select is(:t2::bigint, :t1::bigint + 1, 'the next claim at the deadline takes the job again under a new token');
select is((select a.outcome || ': ' || a.error from ai.job_attempts(:id) a where a.attempt = 1),
          'deadline_exceeded: deadline exceeded', 'attempt 1 ended at its deadline');
select throws_ok(format('select ai.fenced_write(%s, %s)', :id, :t1), 'AS006', format('job %s: lease lost', :id),
                 'the first handler is fenced out');
select set_config('ai.frozen_now', '2030-01-01 00:00:20+00', true) is not null as moved \gset
select is((select count(*)::int from ai.claim_jobs('w3', '1 minute', 'default', 10)), 0, 'the last attempt is not retried');
select is((select j.status || ' / ' || j.last_error from ai.get_job(:id) j),
          'FAILED / deadline exceeded: attempt 2 ran out of time', 'it is dead-lettered with the reason');
select is(array(select a.outcome from ai.job_attempts(:id) a order by a.attempt),
          array['deadline_exceeded', 'deadline_exceeded'], 'both attempts say deadline_exceeded');
select is((select j.attempts from ai.get_job(:id) j), 2, 'two attempts counted');

select * from finish();
rollback;
