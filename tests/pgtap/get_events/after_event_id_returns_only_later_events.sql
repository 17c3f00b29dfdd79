\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-ev');
select (ai.record_event('t-ev', 'one')).event_id as e1 \gset
select ai.record_event('t-ev', 'two');
select (ai.record_event('t-ev', 'three')).event_id as e3 \gset

select results_eq(format('select kind from ai.get_events(%L, %s)', 't-ev', :e1), array['two', 'three'], 'events after e1');
select is_empty(format('select * from ai.get_events(%L, %s)', 't-ev', :e3), 'nothing after the newest');
select results_eq($$select count(*)::int from ai.get_events('t-ev', 0)$$, array[4], 'after 0 is everything');

select * from finish();
rollback;
