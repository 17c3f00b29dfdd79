\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select throws_ok($$select ai.list_sessions(status => 'done')$$, 'AS002',
                 'status ''done'' is not active, waiting, completed, failed or cancelled', 'an unknown status');
select throws_ok($$select ai.list_sessions(max_rows => 0)$$, 'AS002',
                 'max_rows must be between 1 and 10000, not 0', 'max_rows out of range');
select throws_ok($$select ai.list_sessions(owner => '')$$, 'AS002', null, 'an empty owner');

select * from finish();
rollback;
