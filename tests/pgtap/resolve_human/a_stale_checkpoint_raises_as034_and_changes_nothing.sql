\ir ../fixtures/helpers.sql
begin;
select plan(4);
\ir ../fixtures/side_effects.sql

select ai.put_checkpoint('qa1', '', '01J00000000000000000000001', null, 'test', '\x01', '{}', '{}') is not null as put \gset
select ai.request_human(:job, :token, '01J00000000000000000000001') is not null as asked \gset
set local role tenant_a;
select throws_ok($$select ai.resolve_human('qa1', '01J00000000000000000000000', '{}')$$, 'AS034',
                 'checkpoint 01J00000000000000000000000 is stale: thread qa1 waits at 01J00000000000000000000001', 'an older checkpoint');
-- the thread moves on (someone wrote a newer checkpoint) while the person thinks
select ai.put_checkpoint('qa1', '', '01J00000000000000000000002', '01J00000000000000000000001', 'test', '\x01', '{}', '{}') is not null as put \gset
select throws_ok($$select ai.resolve_human('qa1', '01J00000000000000000000001', '{}')$$, 'AS034',
                 'checkpoint 01J00000000000000000000001 is stale: thread qa1 waits at 01J00000000000000000000002', 'the checkpoint paused on, after the thread moved on');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select status from ai.human_approvals where thread_id = 'qa1'), 'pending', 'the approval is still pending');
select is((select status from ai.agent_jobs where job_id = :job), 'AWAITING_HUMAN', 'the job still waits');
set local role tenant_a;
select * from finish();
rollback;
