\ir ../fixtures/helpers.sql
begin;
select plan(8);

set local role tenant_a;
select ai.create_session('t-ev');
select throws_ok($$select ai.record_event('t-ev', null)$$, 'AS002',
  'event kind NULL is not a lowercase name (a-z, 0-9, _ and ., at most 63 characters)', 'NULL kind');
select throws_ok($$select ai.record_event('t-ev', '')$$, 'AS002',
  'event kind '''' is not a lowercase name (a-z, 0-9, _ and ., at most 63 characters)', 'empty kind');
select throws_ok($$select ai.record_event('t-ev', 'ToolCall')$$, 'AS002',
  'event kind ''ToolCall'' is not a lowercase name (a-z, 0-9, _ and ., at most 63 characters)', 'upper case kind');
select throws_ok($$select ai.record_event('t-ev', '1st')$$, 'AS002',
  'event kind ''1st'' is not a lowercase name (a-z, 0-9, _ and ., at most 63 characters)', 'kind starting with a digit');
select throws_ok($$select ai.record_event('t-ev', 'tool call')$$, 'AS002',
  'event kind ''tool call'' is not a lowercase name (a-z, 0-9, _ and ., at most 63 characters)', 'kind with a space');
select throws_ok(format('select ai.record_event(%L, %L)', 't-ev', repeat('k', 64)), 'AS002',
  format('event kind %L is not a lowercase name (a-z, 0-9, _ and ., at most 63 characters)', repeat('k', 64)), 'kind of 64 characters');
select lives_ok(format('select ai.record_event(%L, %L)', 't-ev', 'a.b_' || repeat('k', 59)), 'a kind of 63 characters with . and _ is fine');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.session_events where thread_id = 't-ev'), 2, 'only the start event and the valid one');
set local role tenant_a;

select * from finish();
rollback;
