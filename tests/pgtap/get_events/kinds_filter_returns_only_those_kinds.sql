\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-ev');
select ai.record_event('t-ev', k) from unnest(array['tool_call', 'tool_result', 'error', 'tool_call']) k;

select results_eq($$select kind from ai.get_events('t-ev', kinds => array['tool_call'])$$,
  array['tool_call', 'tool_call'], 'one kind');
select results_eq($$select kind from ai.get_events('t-ev', kinds => array['error', 'start'])$$,
  array['start', 'error'], 'several kinds, still oldest first');
select is_empty($$select * from ai.get_events('t-ev', kinds => array['nothing'])$$, 'a kind never recorded');

select * from finish();
rollback;
