\ir ../fixtures/helpers.sql
begin;
select plan(6);

set local ai.frozen_now = '2030-01-01 00:00:00+00';
set local role tenant_a;
select ai.create_session('t-clock');
select ai.append_message_idempotent('t-clock', 'user', '"hi"');
select ai.record_event('t-clock', 'step_started');

reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select created_at from ai.agent_sessions where thread_id = 't-clock'), '2030-01-01 00:00:00+00'::timestamptz, 'session created_at');
select is((select updated_at from ai.agent_sessions where thread_id = 't-clock'), '2030-01-01 00:00:00+00'::timestamptz, 'session updated_at');
select is((select created_at from ai.session_messages where thread_id = 't-clock'), '2030-01-01 00:00:00+00'::timestamptz, 'message created_at');
select is((select min(created_at) from ai.session_events where thread_id = 't-clock'), '2030-01-01 00:00:00+00'::timestamptz, 'start event created_at');
select is((select created_at from ai.session_events where thread_id = 't-clock' and kind = 'step_started'), '2030-01-01 00:00:00+00'::timestamptz, 'recorded event created_at');
set local role tenant_a;
set local ai.frozen_now = '2030-01-02 00:00:00+00';
select is((ai.set_session_status('t-clock', 'completed')).completed_at, '2030-01-02 00:00:00+00'::timestamptz, 'completed_at follows the moved clock');

select * from finish();
rollback;
