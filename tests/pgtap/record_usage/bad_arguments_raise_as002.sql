\ir ../fixtures/helpers.sql
begin;
select plan(10);

set local role tenant_a;
select ai.create_session('t-u');
select throws_ok($$select ai.record_usage('t-u', null, 'm', 1, 1, 0)$$, 'AS002', null, 'NULL key');
select throws_ok($$select ai.record_usage('t-u', '', 'm', 1, 1, 0)$$, 'AS002', null, 'empty key');
select throws_ok($$select ai.record_usage('t-u', 'k', null, 1, 1, 0)$$, 'AS002', null, 'NULL model');
select throws_ok($$select ai.record_usage('t-u', 'k', 'm', -1, 1, 0)$$, 'AS002', null, 'negative input tokens');
select throws_ok($$select ai.record_usage('t-u', 'k', 'm', 1, null, 0)$$, 'AS002', null, 'NULL output tokens');
select throws_ok($$select ai.record_usage('t-u', 'k', 'm', 1, 1, -0.01)$$, 'AS002', null, 'negative cost');
select throws_ok($$select ai.record_usage('t-u', 'k', 'm', 1, 1, 'NaN')$$, 'AS002', null, 'NaN cost');
select throws_ok($$select ai.record_usage('t-u', 'k', 'm', 1, 1, 'Infinity')$$, 'AS002', null, 'an infinite cost');
select throws_ok($$select ai.record_usage('t-u', 'k', 'm', 1, 1, 0, '[]')$$, 'AS002', null, 'details not an object');
select throws_ok($$select ai.record_usage('t-u', 'k', 'm', 1, 1, 0, '{}', 1, null)$$, 'AS002', null, 'a job without a token');

select * from finish();
rollback;
