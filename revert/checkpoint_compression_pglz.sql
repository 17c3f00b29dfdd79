-- Revert agent-state:checkpoint_compression_pglz from pg
-- Back to what checkpoint_compression set: LZ4 where the server has it. Values already written
-- stay pglz and readable.
begin;

do $$
begin
  if pg_catalog.current_setting('server_version_num')::integer >= 140000
     and exists (select from pg_catalog.pg_settings
                 where name = 'default_toast_compression' and 'lz4' = any (enumvals)) then
    execute 'alter table ai.checkpoints alter column checkpoint set compression lz4';
    execute 'alter table ai.checkpoint_blobs alter column blob set compression lz4';
    execute 'alter table ai.checkpoint_writes alter column blob set compression lz4';
  end if;
end
$$;

commit;
