-- Revert agent-state:tenant_read_indexes from pg

begin;

select pg_catalog.set_config('lock_timeout', '5s', true) where pg_catalog.current_setting('lock_timeout') = '0';

drop index ai.human_approvals_owner_pending;
drop index ai.eval_runs_owner_created;

commit;
