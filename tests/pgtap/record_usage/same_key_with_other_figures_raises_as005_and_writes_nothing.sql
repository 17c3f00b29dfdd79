\ir ../fixtures/helpers.sql
begin;
select plan(4);

set local role tenant_a;
select ai.create_session('t-u');
select ai.record_usage('t-u', 'call-1', 'gpt-x', 10, 5, 1.50);
select throws_ok($$select ai.record_usage('t-u', 'call-1', 'gpt-x', 10, 6, 1.50)$$, 'AS005', null, 'other output tokens');
select throws_ok($$select ai.record_usage('t-u', 'call-1', 'gpt-x', 10, 5, 1.51)$$, 'AS005', null, 'another cost');
select throws_ok($$select ai.record_usage('t-u', 'call-1', 'gpt-y', 10, 5, 1.50)$$, 'AS005', null, 'another model');
select is((select sum(records)::int from ai.usage_summary('-infinity', 'infinity')), 1, 'still one record');

select * from finish();
rollback;
