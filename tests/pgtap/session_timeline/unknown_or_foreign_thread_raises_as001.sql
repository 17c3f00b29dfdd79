\ir ../fixtures/helpers.sql
begin;
select plan(3);
\ir ../fixtures/two_tenants.sql

set local role tenant_a;
select throws_ok($$select * from ai.session_timeline('nope')$$, 'AS001', 'thread nope not found', 'an unknown thread');
select throws_ok($$select * from ai.session_timeline('t-b')$$, 'AS001', 'thread t-b not found', 'another tenant''s thread');
select throws_ok($$select * from ai.session_timeline('t-a', max_rows => 0)$$, 'AS002',
                 'max_rows must be between 1 and 10000, not 0', 'max_rows out of range');

select * from finish();
rollback;
