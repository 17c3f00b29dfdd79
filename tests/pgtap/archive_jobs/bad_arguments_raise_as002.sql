\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/queue.sql

set local role app_service;
select throws_ok($$select ai.archive_jobs(null)$$, 'AS002', 'older_than must be a non-negative interval', 'NULL older_than');
select throws_ok($$select ai.archive_jobs('-1 day')$$, 'AS002', 'older_than must be a non-negative interval', 'negative older_than');
select throws_ok($$select ai.archive_jobs('1 day', 0)$$, 'AS002', 'max_rows must be between 1 and 100000, not 0', 'max_rows 0');

select * from finish();
rollback;
