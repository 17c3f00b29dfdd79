\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-ev');
select ai.record_event('t-ev', 'e' || i) from generate_series(1, 5) i;

select results_eq($$select kind from ai.get_events('t-ev', 0, 3)$$, array['start', 'e1', 'e2'], 'the three oldest');
select results_eq($$select kind from ai.get_events('t-ev', 0, 1)$$, array['start'], 'max_rows 1');

select * from finish();
rollback;
