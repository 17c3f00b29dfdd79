\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role app_service;
select throws_ok($$select ai.list_jobs(status => 'pending')$$, 'AS002',
                 'status ''pending'' is not PENDING, IN_PROGRESS, AWAITING_HUMAN, COMPLETED, FAILED or CANCELLED',
                 'an unknown status');
select throws_ok($$select ai.list_jobs(max_rows => 10001)$$, 'AS002',
                 'max_rows must be between 1 and 10000, not 10001', 'max_rows out of range');

select * from finish();
rollback;
