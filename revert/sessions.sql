-- Revert agent-state:sessions from pg
begin;
drop table ai.agent_sessions;
drop function ai._check_session_row(text, text, jsonb, bigint, timestamptz);
commit;
