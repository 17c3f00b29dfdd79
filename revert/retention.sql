-- Revert agent-state:retention from pg
-- Refuses to drop an archive that holds sessions: restore them (or drop them knowingly) first.
begin;
do $$
begin
  if exists (select from ai_archive.agent_sessions) then
    raise exception 'ai_archive holds sessions: restore them with ai.restore_session before reverting retention';
  end if;
end
$$;
drop index ai.agent_sessions_finished;
drop table ai_archive.checkpoint_writes, ai_archive.checkpoint_blobs, ai_archive.checkpoints, ai_archive.agent_jobs_archive, ai_archive.agent_jobs, ai_archive.eval_runs, ai_archive.session_events, ai_archive.session_messages, ai_archive.agent_sessions;
drop table ai._archived_tables;
drop schema ai_archive;
delete from ai.error_codes where sqlstate = 'AS041';
commit;
