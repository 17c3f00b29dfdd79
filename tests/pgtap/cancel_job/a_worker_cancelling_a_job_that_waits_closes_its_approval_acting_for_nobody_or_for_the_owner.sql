\ir ../fixtures/helpers.sql
begin;
select plan(5);
\ir ../fixtures/queue.sql

-- Two waiting jobs, of qa1 (tenant_a) and qb1 (tenant_b).
set local role tenant_a;
select (ai.enqueue_job('qa1')).job_id as ja \gset
set local role tenant_b;
select (ai.enqueue_job('qb1')).job_id as jb \gset
set local role app_service;
select ai.request_human(job_id, fencing_token, 'c1') from ai.claim_job('w1', '1 minute');
select ai.request_human(job_id, fencing_token, 'c1') from ai.claim_job('w1', '1 minute');

-- A service acting for nobody sees every tenant and closes the approval for its owner.
select is((select status from ai.cancel_job(:ja)), 'CANCELLED', 'a worker acting for nobody cancels tenant_a''s waiting job');
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select (status, owner, decided_by, decided_for)::text from ai.human_approvals where job_id = :ja),
          '(cancelled,tenant_a,app_service,)', 'the approval is cancelled by the worker, for no particular owner');
select is((select status from ai.agent_sessions where thread_id = 'qa1'), 'active', 'tenant_a''s session is active again');
set local role app_service;

-- Acting for the owner.
select ai.act_as('tenant_b') is not null as acting \gset
select ai.cancel_job(:jb) is not null as cancelled \gset
reset role;  -- assertions on tables run as the superuser (tenants hold no table privilege)
select is((select (status, decided_by, decided_for)::text from ai.human_approvals where job_id = :jb),
          '(cancelled,app_service,tenant_b)', 'a service acting for the owner closes it for that owner');
select is((select status from ai.agent_sessions where thread_id = 'qb1'), 'active', 'tenant_b''s session is active again');
set local role app_service;
select * from finish();
rollback;
