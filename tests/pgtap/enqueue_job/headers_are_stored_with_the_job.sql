\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1', headers => '{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate": "k=v"}')).job_id as traced \gset
select (ai.enqueue_job('qa2')).job_id as plain \gset
select is((ai.get_job(:traced)).headers ->> 'traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
          'the enqueuer''s trace context is kept with the job');
select is((ai.get_job(:plain)).headers, null, 'no headers: NULL');
select is((select (j.headers ->> 'tracestate') from ai.enqueue_jobs(array['qa1', 'qa2'], array['{}', '{}']::jsonb[],
                                                                    headers => '{"tracestate": "k=v"}') j limit 1),
          'k=v', 'enqueue_jobs stores the call''s headers with each job');
set local role app_service;
select is((select c.headers ->> 'tracestate' from ai.claim_jobs('w', '1 minute', 'default', 10) c where c.job_id = :traced),
          'k=v', 'the claim hands them to the worker');

select * from finish();
rollback;
