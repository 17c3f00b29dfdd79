\ir ../fixtures/helpers.sql
begin;
select plan(4);

set local role tenant_a;
select ai.create_session('t-1');
select ai.create_session('t-2');
set local ai.frozen_now = '2030-01-01 10:00:00+00';
select ai.record_usage('t-1', 'a', 'm1', 10, 1, 0.10);
select ai.record_usage('t-2', 'b', 'm2', 20, 2, 0.20);
set local ai.frozen_now = '2030-01-02 10:00:00+00';
select ai.record_usage('t-1', 'c', 'm1', 30, 3, 0.30);

select results_eq($$select owner, records, input_tokens, output_tokens, cost from ai.usage_summary('2030-01-01', '2030-01-03')$$,
                  $$values ('tenant_a'::text, 3::bigint, 60::numeric, 6::numeric, 0.60::numeric)$$, 'per owner (the default)');
select results_eq($$select thread_id, cost from ai.usage_summary('2030-01-01', '2030-01-03', array['thread'])$$,
                  $$values ('t-1'::text, 0.40::numeric), ('t-2', 0.20)$$, 'per thread');
select results_eq($$select model, day, records from ai.usage_summary('2030-01-01', '2030-01-03', array['model', 'day'])$$,
                  $$values ('m1'::text, '2030-01-01'::date, 1::bigint), ('m1', '2030-01-02', 1), ('m2', '2030-01-01', 1)$$,
                  'per model and day');
select results_eq($$select records from ai.usage_summary('2030-01-01', '2030-01-02 10:00:00+00')$$,
                  array[2::bigint], 'until is exclusive');

select * from finish();
rollback;
