\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

set local role app_service;
select ai.set_queue_deadlines('default', timeout => '1 minute', deadline_after => '1 hour', start_within => '5 minutes');
set local role tenant_a;
select is((select row(j.timeout, j.deadline, j.start_by)::text from ai.enqueue_job('qa1', run_at => '2030-01-01 00:10:00+00') j),
          row('1 minute'::interval, '2030-01-01 01:10:00+00'::timestamptz, '2030-01-01 00:15:00+00'::timestamptz)::text,
          'a job without deadlines gets the queue''s, counted from its run_at');
select is((select row(j.timeout, j.deadline, j.start_by)::text from ai.enqueue_job('qa2', timeout => '10 seconds') j),
          row('10 seconds'::interval, '2030-01-01 01:00:00+00'::timestamptz, '2030-01-01 00:05:00+00'::timestamptz)::text,
          'its own replace them one by one');
select is((select row(j.timeout, j.deadline, j.start_by)::text from ai.enqueue_job('qa1', queue => 'other') j),
          row(null::interval, null::timestamptz, null::timestamptz)::text, 'a queue without defaults: none');
select is((select row(j.timeout, j.deadline)::text
           from ai.enqueue_jobs(array['qa1', 'qa2'], array['{}', '{}']::jsonb[], timeouts => array['2 seconds', null]::interval[]) j
           order by j.job_id desc limit 1),
          row('1 minute'::interval, '2030-01-01 01:00:00+00'::timestamptz)::text, 'enqueue_jobs takes them too, per job');

select * from finish();
rollback;
