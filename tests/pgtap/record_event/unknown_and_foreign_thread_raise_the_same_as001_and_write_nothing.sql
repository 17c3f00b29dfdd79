\ir ../fixtures/helpers.sql
begin;
select plan(3);

set local role tenant_a;
select ai.create_session('t-a');
set local role tenant_b;
select throws_ok($$select ai.record_event('t-nope', 'error')$$, 'AS001', 'thread t-nope not found', 'unknown thread');
select throws_ok($$select ai.record_event('t-a', 'error')$$, 'AS001', 'thread t-a not found', 'another tenant''s thread looks unknown');
reset role;
select is((select count(*)::int from ai.session_events where thread_id = 't-a'), 1, 'only tenant_a''s start event');

select * from finish();
rollback;
