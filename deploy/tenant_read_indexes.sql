-- Deploy agent-state:tenant_read_indexes to pg
-- requires: human_in_the_loop
-- requires: evals
--
-- A tenant's list must cost what its own rows cost, never what another tenant's do (docs/security.md,
-- "Bounded reads"). ai.pending_approvals and ai.get_eval_runs list in time order; the indexes of
-- 0.1.0 held that order across every owner (human_approvals_pending) or only per candidate
-- (eval_runs_candidate), so a tenant's call read other tenants' rows and dropped them by policy.
-- These put the owner first:
--   human_approvals_owner_pending: a tenant's pending approvals, oldest first;
--   eval_runs_owner_created: a tenant's eval runs, newest first.
-- Under a live fleet (docs/operations.md, "Upgrading under a live fleet") both may be built first
-- with CREATE INDEX CONCURRENTLY, which `if not exists` keeps; otherwise each takes a SHARE lock on
-- its table for the build, bounded by the lock_timeout. Neither table is on a worker's hot path.
begin;

select pg_catalog.set_config('lock_timeout', '5s', true) where pg_catalog.current_setting('lock_timeout') = '0';

create index if not exists human_approvals_owner_pending on ai.human_approvals (owner, requested_at, approval_id)
  where status = 'pending';
create index if not exists eval_runs_owner_created on ai.eval_runs (owner, created_at desc, eval_id desc);

commit;
