\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-u');
select (ai.record_usage('t-u', 'call-1', 'gpt-x', 10, 5, 1.50)).usage_id as first \gset
select is((ai.record_usage('t-u', 'call-1', 'gpt-x', 10, 5, 1.5)).inserted, false, 'not inserted again');
select is((ai.record_usage('t-u', 'call-1', 'gpt-x', 10, 5, 1.5)).usage_id, :first::bigint, 'the original row');
select is((select records from ai.usage_summary('-infinity', 'infinity')), 1::bigint, 'one record');

select * from finish();
rollback;
