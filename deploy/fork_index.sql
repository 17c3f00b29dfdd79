-- Deploy agent-state:fork_index to pg
-- requires: events
--
-- A run's forks and copies, found from the run: ai.fork_thread and ai.copy_thread start the new
-- thread with a `start` event whose payload names the source (`copied_from`; a fork also its
-- `from_checkpoint`). ai.list_forks (the console's run page) reads this index, so listing a run's
-- forks costs what those forks cost, never a scan of every thread's events. Partial: only the start
-- events of copies and forks are in it, one row per such thread.
-- Under a live fleet it may be built first with CREATE INDEX CONCURRENTLY, which `if not exists`
-- keeps; otherwise it takes a SHARE lock on ai.session_events for the build, bounded by the lock_timeout.
begin;

select pg_catalog.set_config('lock_timeout', '5s', true) where pg_catalog.current_setting('lock_timeout') = '0';

create index if not exists session_events_copied_from
  on ai.session_events ((payload ->> 'copied_from'), created_at, thread_id)
  where kind = 'start' and (payload ->> 'copied_from') is not null;

commit;
