\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as j1 \gset
select (ai.enqueue_job('qa2', queue => 'other')).job_id as j2 \gset
set local role tenant_b;
select (ai.enqueue_job('qb1')).job_id as j3 \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).job_id as claimed \gset

select results_eq($$select job_id from ai.list_jobs()$$,
                  format('values (%s::bigint), (%s), (%s)', :j3, :j2, :j1), 'every job, newest first');
select results_eq($$select job_id from ai.list_jobs(queue => 'other')$$, format('values (%s::bigint)', :j2), 'of one queue');
select results_eq($$select job_id, status from ai.list_jobs(status => 'IN_PROGRESS')$$,
                  format('values (%s::bigint, ''IN_PROGRESS'')', :claimed), 'of one status');
select results_eq($$select job_id from ai.list_jobs(thread_id => 'qb1')$$, format('values (%s::bigint)', :j3), 'of one thread');
select is((select count(*) from ai.list_jobs(max_rows => 1)), 1::bigint, 'at most max_rows');

select * from finish();
rollback;
