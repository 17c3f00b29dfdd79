\ir ../fixtures/helpers.sql
begin;
select plan(2);
set local ai.frozen_now = '2030-01-01 00:00:00+00';

-- A queue's idempotency key is unique among the jobs of ai.agent_jobs: once a job's session is
-- archived, its key is free again, and a second session archived later may hold a job of it.
set local role tenant_a;
select ai.create_session(t) from unnest(array['first', 'second']) t;
select job_id as first_job from ai.enqueue_job('first', '{}', idempotency_key => 'k1') \gset
select ai.set_session_status('first', 'completed');
set local ai.frozen_now = '2030-01-02 00:00:00+00';
set local role app_service;
select count(*) from ai.archive_sessions('0 seconds');
set local role tenant_a;
select isnt((select job_id from ai.enqueue_job('second', '{}', idempotency_key => 'k1')),
            :first_job::bigint, 'the key makes a new job once the first is archived');
select ai.set_session_status('second', 'completed');
set local ai.frozen_now = '2030-01-03 00:00:00+00';
set local role app_service;
select results_eq($$select thread_id from ai.archive_sessions('0 seconds')$$, array['second'],
                  'and the session holding it is archived too');

select * from finish();
rollback;
