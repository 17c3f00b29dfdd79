\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/retention.sql
set local role app_service;
select throws_ok($$select * from ai.archive_sessions('-1 day')$$, 'AS002', 'older_than must be a non-negative interval, not -1 days', 'negative interval');
select throws_ok($$select * from ai.archive_sessions(null)$$, 'AS002', 'older_than must be a non-negative interval, not NULL', 'NULL interval');
select throws_ok($$select * from ai.archive_sessions('1 day', 0)$$, 'AS002', 'batch_size must be between 1 and 10000, not 0', 'zero batch');
set local role tenant_a;
select throws_ok($$select * from ai.archive_sessions()$$, '42501', null, 'a tenant may not archive');

select * from finish();
rollback;
