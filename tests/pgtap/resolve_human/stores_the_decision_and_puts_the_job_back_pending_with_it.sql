\ir ../fixtures/helpers.sql
begin;
select plan(7);
\ir ../fixtures/side_effects.sql

select ai.request_human(:job, :token, 'c1', '{"send": "refund"}') as approval \gset
select set_config('ai.frozen_now', '2030-01-04 00:00:00+00', true) is not null as moved \gset
set local role tenant_a;
select is((select (status, decision, decided_by, decided_for, decided_at)::text from ai.resolve_human('qa1', 'c1', '{"approved": true}')),
          '(resolved,"{""approved"": true}",tenant_a,tenant_a,"2030-01-04 00:00:00+00")', 'the decision is stored with who and when');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select (status, run_at)::text from ai.agent_jobs where job_id = :job), '(PENDING,"2030-01-04 00:00:00+00")', 'the job is PENDING, due now');
select is((select (payload -> 'human') - 'decided_at' from ai.agent_jobs where job_id = :job),
          jsonb_build_object('approval_id', :'approval', 'checkpoint_id', 'c1', 'action', '{"send": "refund"}'::jsonb,
                             'decision', '{"approved": true}'::jsonb, 'decided_by', 'tenant_a'), 'carrying the decision in its payload');
select is((select status from ai.agent_sessions where thread_id = 'qa1'), 'active', 'the session is active again');
select is((select payload - 'approval_id' from ai.session_events where thread_id = 'qa1' and kind = 'human_resolved'),
          jsonb_build_object('job_id', :job, 'checkpoint_id', 'c1', 'decision', '{"approved": true}'::jsonb, 'decided_by', 'tenant_a', 'decided_for', 'tenant_a'),
          'a human_resolved event records it');
set local role tenant_a;
reset role;
set local role app_service;
select (ai.claim_job('w2', '1 minute')).job_id as claimed \gset
select is(:claimed, :job, 'the next claim, by another worker, takes the job');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select attempts from ai.agent_jobs where job_id = :job), 1, 'the pause counted no attempt');
set local role app_service;
select * from finish();
rollback;
