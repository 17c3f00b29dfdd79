\ir ../fixtures/helpers.sql
begin;
select plan(4);

set local role tenant_a;
select ai.create_session('t-a');
set local role tenant_b;
select throws_ok($$select ai.set_session_status('t-nope', 'completed')$$, 'AS001', 'thread t-nope not found', 'unknown thread');
select throws_ok($$select ai.set_session_status('t-a', 'completed')$$, 'AS001', 'thread t-a not found',
                 'another tenant''s thread looks unknown');
reset role;
select is((select status from ai.agent_sessions where thread_id = 't-a'), 'active', 'tenant_a''s session is unchanged');
select is((select count(*)::int from ai.session_events where thread_id = 't-a' and kind = 'status'), 0, 'no status event');

select * from finish();
rollback;
