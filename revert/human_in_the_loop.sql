-- Revert agent-state:human_in_the_loop from pg
-- Refuses to drop archived approvals: restore their sessions first (as retention's revert does).
-- Jobs still AWAITING_HUMAN stay so (the status belongs to the queue); cancel them if needed.
begin;
do $$
begin
  if exists (select from ai_archive.human_approvals) then
    raise exception 'ai_archive.human_approvals holds rows: restore their sessions with ai.restore_session before reverting human_in_the_loop';
  end if;
end
$$;
delete from ai._archived_tables where table_name = 'human_approvals';
drop table ai_archive.human_approvals;
drop table ai.human_approvals;
drop function ai._check_approval_row(text, text, jsonb, timestamptz);
delete from ai.error_codes where sqlstate in ('AS032', 'AS033', 'AS034');
commit;
