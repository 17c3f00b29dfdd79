-- Revert agent-state:approval_history from pg

begin;

drop index ai.human_approvals_owner_decided;
drop index ai.human_approvals_decided;

commit;
