-- Revert agent-state:side_effects from pg
-- Refuses to drop archived ledger rows: restore their sessions first (as retention's revert does).
begin;
do $$
begin
  if exists (select from ai_archive.side_effects) then
    raise exception 'ai_archive.side_effects holds rows: restore their sessions with ai.restore_session before reverting side_effects';
  end if;
end
$$;
delete from ai._archived_tables where table_name = 'side_effects';
drop table ai_archive.side_effects;
drop table ai.side_effects;
drop function ai._check_side_effect_row(text, text, integer, integer, timestamptz);
delete from ai.error_codes where sqlstate in ('AS030', 'AS031');
commit;
