\ir ../fixtures/helpers.sql
begin;
select plan(10);
\ir ../fixtures/side_effects.sql

select ai.request_human(:job, :token, 'c1', '{"send": "refund"}') as approval \gset
select set_config('ai.frozen_now', '2030-01-02 00:00:00+00', true) is not null as moved \gset
set local role tenant_a;
select is((select status from ai.cancel_job(:job)), 'CANCELLED', 'the owner cancels the job that waits for a person');
select is((select (status, decision, decided_by, decided_for, decided_at)::text from ai.get_approval(:'approval')),
          '(cancelled,,tenant_a,tenant_a,"2030-01-02 00:00:00+00")', 'its approval is cancelled, by whom and when, with no decision');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select status from ai.agent_sessions where thread_id = 'qa1'), 'active', 'the session is active again');
select is((select payload from ai.session_events where thread_id = 'qa1' and kind = 'approval_cancelled'),
          jsonb_build_object('approval_id', :'approval', 'job_id', :job, 'checkpoint_id', 'c1', 'cancelled_by', 'tenant_a'),
          'an approval_cancelled event records it');
select is((select payload from ai.session_events where thread_id = 'qa1' and kind = 'status' order by event_id desc limit 1),
          '{"to": "active", "from": "waiting"}'::jsonb, 'and a status event the way back to active');
set local role tenant_a;
select is((select count(*)::int from ai.pending_approvals() where thread_id = 'qa1'), 0, 'nothing of the thread is listed as waiting');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select count(*)::int from ai.human_approvals where thread_id = 'qa1' and status = 'pending'), 0, 'no approval of the thread is pending');
set local role tenant_a;

-- The thread may wait for a person again: the cancelled approval does not hold its one pending slot.
select (ai.enqueue_job('qa1')).job_id as job2 \gset
set local role app_service;
select (ai.claim_job('w1', '1 minute')).fencing_token as token2 \gset
select lives_ok(format($$select ai.request_human(%s, %s, 'c1')$$, :job2, :token2), 'a new job of the thread can wait for a person');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select status from ai.agent_sessions where thread_id = 'qa1'), 'waiting', 'and the session waits again');
select results_eq($$select status from ai.human_approvals where thread_id = 'qa1' order by requested_at, approval_id$$,
                  $$values ('cancelled'), ('pending')$$, 'next to the cancelled approval');
set local role app_service;
select * from finish();
rollback;
