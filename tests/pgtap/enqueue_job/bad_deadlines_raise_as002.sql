\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/queue.sql

set local role tenant_a;
select throws_ok($$select ai.enqueue_job('qa1', timeout => '0 seconds')$$, 'AS002', 'timeout must be a positive interval, not 00:00:00', 'a zero timeout');
select throws_ok($$select ai.enqueue_job('qa1', timeout => '-1 second')$$, 'AS002', null, 'a negative timeout');
select throws_ok($$select ai.enqueue_job('qa1', deadline => '2029-12-31 23:59:00+00')$$, 'AS002', null, 'a deadline already past');
select throws_ok($$select ai.enqueue_job('qa1', run_at => '2030-01-01 01:00:00+00', deadline => '2030-01-01 00:30:00+00')$$, 'AS002', null, 'a deadline before run_at');
select throws_ok($$select ai.enqueue_job('qa1', start_by => '2029-12-31 23:59:00+00')$$, 'AS002', null, 'a start_by already past');

select * from finish();
rollback;
