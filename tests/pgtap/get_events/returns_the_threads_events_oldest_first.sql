\ir ../fixtures/helpers.sql
begin;
select plan(2);

set local role tenant_a;
select ai.create_session('t-ev');
select ai.create_session('t-other');
select ai.record_event('t-ev', 'step_started');
select ai.record_event('t-other', 'noise');
select ai.record_event('t-ev', 'tool_call');
select ai.record_event('t-ev', 'complete');

select results_eq($$select kind from ai.get_events('t-ev')$$,
  array['start', 'step_started', 'tool_call', 'complete'], 'the thread''s events, oldest first, no other thread''s');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select results_eq($$select event_id from ai.get_events('t-ev')$$,
  $$select event_id from ai.session_events where thread_id = 't-ev' order by event_id$$, 'ordered by event_id');
set local role tenant_a;

select * from finish();
rollback;
