\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select ai.create_session('t-u');
select results_eq(
  $$select owner, model, input_tokens, output_tokens, cost, details, created_at, inserted
    from ai.record_usage('t-u', 'call-1', 'gpt-x', 1200, 300, 0.0123456789, '{"cached": 100}')$$,
  $$values ('tenant_a'::text, 'gpt-x'::text, 1200::bigint, 300::bigint, 0.0123456789::numeric, '{"cached": 100}'::jsonb,
            '2030-01-01 00:00:00+00'::timestamptz, true)$$,
  'the stored row, owned by the caller');
select is((select cost::text from ai.usage_summary('2029-01-01', '2031-01-01')), '0.0123456789', 'cost keeps every digit');
select is((select count(*)::int from ai.usage_summary('2029-01-01', '2031-01-01')), 1, 'one owner summed');

select * from finish();
rollback;
