-- Revert agent-state:fork_index from pg

begin;

select pg_catalog.set_config('lock_timeout', '5s', true) where pg_catalog.current_setting('lock_timeout') = '0';

drop index ai.session_events_copied_from;

commit;
