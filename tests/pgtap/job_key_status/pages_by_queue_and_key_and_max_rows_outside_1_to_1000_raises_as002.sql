\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

set local role tenant_a;
select count(ai.create_session('qa' || n)) as made from generate_series(10, 14) n \gset
select count(ai.enqueue_job('qa' || n, key => 'k' || n)) as queued from generate_series(10, 14) n \gset
set local role app_service;
select results_eq($$select key from ai.job_key_status('default', 2)$$, array['k10', 'k11'], 'the first page');
select results_eq($$select key from ai.job_key_status('default', 2, 'default', 'k11')$$, array['k12', 'k13'], 'the next, after the last key');
select throws_ok($$select * from ai.job_key_status(max_rows => 0)$$, 'AS002', null, 'max_rows 0');
select throws_ok($$select * from ai.job_key_status(max_rows => 1001)$$, 'AS002', null, 'max_rows 1001');

select * from finish();
rollback;
