-- Revert agent-state:retention_functions from pg

begin;

drop procedure ai.archive_all_sessions(interval, integer);
drop function ai.restore_session(text);
drop function ai.archive_sessions(interval, integer);
drop function ai._copy_columns(text, boolean);

commit;
