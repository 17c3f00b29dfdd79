-- Deploy agent-state:sessions_row_check_validated to pg
-- requires: sessions_dead_columns
--
-- The row check sessions_dead_columns added NOT VALID (under that change's ACCESS EXCLUSIVE lock
-- a validating ADD would have read every session), validated here in a transaction of its own:
-- VALIDATE CONSTRAINT takes SHARE UPDATE EXCLUSIVE, which blocks no reader and no writer, while
-- it reads every row. Every stored row passed the old check, whose rules are these and one more.
begin;

alter table ai.agent_sessions validate constraint agent_sessions_row_check;
alter table ai_archive.agent_sessions validate constraint agent_sessions_row_check;

commit;
