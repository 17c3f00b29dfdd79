\ir ../fixtures/helpers.sql
begin;
select plan(2);
\ir ../fixtures/queue.sql

set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as a \gset
select (ai.enqueue_job('qa2')).job_id as b \gset
set local role app_service;
select count(*) as claimed from ai.claim_jobs('w', '1 minute', 'default', 2, 'request-1') \gset
select ai.cancel_job(:a) is not null as cancelled \gset
select results_eq('select job_id from ai.claim_jobs(''w'', ''1 minute'', ''default'', 2, ''request-1'')',
                  format('values (%s::bigint)', :b), 'the retry answers with the jobs still held');
select throws_ok('select ai.claim_jobs(''w'', ''1 minute'', ''default'', 2, '''')', 'AS002', null, 'an empty request id raises AS002');

select * from finish();
rollback;
