\ir ../fixtures/helpers.sql
begin;
select plan(6);
\ir ../fixtures/queue.sql

set local role app_service;
select throws_ok($$select ai.claim_job(null)$$, 'AS002', 'worker_id must not be NULL', 'NULL worker_id');
select throws_ok($$select ai.claim_job('')$$, 'AS002', 'worker_id must not be empty', 'empty worker_id');
select throws_ok($$select ai.claim_job('w', '0 seconds')$$, 'AS002', 'lease must be a positive interval, not 00:00:00', 'zero lease');
select throws_ok($$select ai.claim_job('w', '-1 seconds')$$, 'AS002', null, 'negative lease');
select throws_ok($$select ai.claim_job('w', null)$$, 'AS002', 'lease must be a positive interval, not NULL', 'NULL lease');
select throws_ok($$select ai.claim_job('w', '1 minute', null)$$, 'AS002', 'queue must not be NULL', 'NULL queue');

select * from finish();
rollback;
