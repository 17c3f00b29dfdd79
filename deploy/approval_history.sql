-- Deploy agent-state:approval_history to pg
-- requires: human_in_the_loop
--
-- Indexes for the history of decisions (ai.decided_approvals, newest decision first): every
-- owner's for a service, one owner's for a tenant, so a tenant's page costs its own rows.
begin;

create index human_approvals_decided on ai.human_approvals (decided_at desc, approval_id desc)
  where status <> 'pending';
create index human_approvals_owner_decided on ai.human_approvals (owner, decided_at desc, approval_id desc)
  where status <> 'pending';

commit;
