\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as ja \gset
set local role tenant_b;
select (ai.enqueue_job('qb1')).job_id as jb \gset

select results_eq($$select job_id from ai.list_jobs()$$, format('values (%s::bigint)', :jb), 'tenant_b sees its own job');
select is_empty($$select job_id from ai.list_jobs(thread_id => 'qa1')$$, 'not another tenant''s');

select * from finish();
rollback;
