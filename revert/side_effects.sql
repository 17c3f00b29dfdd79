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
drop function ai.get_side_effect(text, text);
drop function ai.abandon_side_effect(text, text, bigint, bigint, text);
drop function ai.finish_side_effect(text, text, jsonb, bigint, bigint);
drop function ai.begin_side_effect(text, text, jsonb, bigint, bigint, interval);
drop function ai._side_effect_holder_alive(ai.side_effects, timestamptz);
drop function ai._fence_side_effect(text, bigint, bigint);
drop function ai._check_side_effect_args(text, text, bigint, bigint, boolean);
drop function ai._check_job_token(bigint, bigint);
drop function ai.idempotency_key(text[]);
delete from ai._archived_tables where table_name = 'side_effects';
drop table ai_archive.side_effects;
drop table ai.side_effects;
delete from ai.error_codes where sqlstate in ('AS030', 'AS031');
commit;
