\ir ../fixtures/helpers.sql
begin;
select plan(2);
set local ai.frozen_now = '2030-01-01 00:00:00+00';

-- The one key of a session's rows that is not the thread's: a queue's idempotency key, which an
-- archived job frees. The owner reused it; restoring the first session would take it twice.
set local role tenant_a;
select ai.create_session(t) from unnest(array['first', 'second']) t;
select ai.enqueue_job('first', '{}', idempotency_key => 'k1');
select ai.set_session_status('first', 'completed');
set local ai.frozen_now = '2030-01-02 00:00:00+00';
set local role app_service;
select count(*) from ai.archive_sessions('0 seconds');
set local role tenant_a;
select ai.enqueue_job('second', '{}', idempotency_key => 'k1');

set local role app_service;
select throws_like($$select ai.restore_session('first')$$,
                   'thread first cannot be restored: duplicate key value violates unique constraint "agent_jobs_idempotency_key"',
                   'a named AS041, not a bare unique violation');
select throws_ok($$select ai.restore_session('first')$$, 'AS041');

select * from finish();
rollback;
