\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/queue.sql

set local role app_service;
select throws_ok($$select ai.claim_jobs('w', '1 minute', 'default', 0)$$, 'AS002', 'max_jobs must be between 1 and 1000, not 0', 'zero');
select throws_ok($$select ai.claim_jobs('w', '1 minute', 'default', 1001)$$, 'AS002', 'max_jobs must be between 1 and 1000, not 1001', 'too many');
select throws_ok($$select ai.claim_jobs('w', '1 minute', 'default', null)$$, 'AS002', 'max_jobs must be between 1 and 1000, not NULL', 'NULL');
select throws_ok($$select ai.claim_jobs('w', null, 'default', 1)$$, 'AS002', 'lease must be a positive interval, not NULL', 'NULL lease');

select * from finish();
rollback;
