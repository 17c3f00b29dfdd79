-- Revert agent-state:checkpoint_compression from pg
-- New values go back to the server's default method; values already written stay LZ4 and readable.
begin;

do $$
begin
  if pg_catalog.current_setting('server_version_num')::integer >= 140000 then
    execute 'alter table ai.checkpoints alter column checkpoint set compression default';
    execute 'alter table ai.checkpoint_blobs alter column blob set compression default';
    execute 'alter table ai.checkpoint_writes alter column blob set compression default';
  end if;
end
$$;

commit;
