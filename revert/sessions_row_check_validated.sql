-- Revert agent-state:sessions_row_check_validated from pg
-- The check as sessions_dead_columns left it: NOT VALID (a constraint cannot be un-validated in
-- place: dropped and added again without reading the rows).
begin;

select pg_catalog.set_config('lock_timeout', '5s', true) where pg_catalog.current_setting('lock_timeout') = '0';
alter table ai.agent_sessions
  drop constraint agent_sessions_row_check,
  add constraint agent_sessions_row_check check (ai._check_session_row(thread_id, status, config, completed_at)) not valid;
alter table ai_archive.agent_sessions
  drop constraint agent_sessions_row_check,
  add constraint agent_sessions_row_check check (ai._check_session_row(thread_id, status, config, completed_at)) not valid;

commit;
