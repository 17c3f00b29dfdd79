\ir ../fixtures/helpers.sql
begin;
select plan(3);

-- The allowed transitions must hold for the table, not only for ai.set_session_status: a tenant
-- holds no table privilege, and even the schema owner's raw UPDATE cannot bring a finished
-- session back to life and append to it again.
set local role tenant_a;
select ai.create_session('t-done');
select ai.set_session_status('t-done', 'completed');
reset role;
select throws_ok($$update ai.agent_sessions set status = 'active', completed_at = null where thread_id = 't-done'$$,
                 null::char(5), null, 'a raw UPDATE cannot move a completed session back to active');
select is((select status from ai.agent_sessions where thread_id = 't-done'), 'completed', 'the session is still completed');
set local role tenant_a;
select throws_ok($$select ai.append_message_idempotent('t-done', 'user', '"after the end"')$$, 'AS004',
                 'session t-done is completed: no more messages', 'so it still takes no message');

select * from finish();
rollback;
