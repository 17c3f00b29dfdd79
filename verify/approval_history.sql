-- Verify agent-state:approval_history on pg

begin;

select 'ai.human_approvals_decided'::regclass;
select 'ai.human_approvals_owner_decided'::regclass;

rollback;
