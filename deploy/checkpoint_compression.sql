-- Deploy agent-state:checkpoint_compression to pg
-- requires: checkpoints
--
-- Checkpoints, channel values and pending writes are compressed with LZ4 instead of the default
-- pglz. Every put compresses the channel values it writes (a LangGraph `messages` channel is
-- several KB of serialized messages each step) and every get decompresses them; measured on a
-- realistic checkpoint, pglz took more than half of a put's server time, LZ4 a fraction of it.
-- On an English-like agent conversation (bench/checkpoint_growth.sh) both store the same bytes
-- within 0.5 % (a text of few distinct words, as bench/checkpoints.sh uses, packs tighter with
-- pglz); Postgres compresses nothing in a row under ~2 KB, so this matters for channel values
-- only (docs/benchmarks.md). Only the hot tables: the archive keeps the default, written once.
--
-- Column compression exists from Postgres 14 and LZ4 only in servers built with it; elsewhere
-- this change does nothing and values stay compressed with pglz. Values written before keep their
-- method (Postgres reads both); only new values use LZ4.
begin;

do $$
begin
  if pg_catalog.current_setting('server_version_num')::integer >= 140000
     and exists (select from pg_catalog.pg_settings
                 where name = 'default_toast_compression' and 'lz4' = any (enumvals)) then
    -- constant statements, run through EXECUTE only because Postgres 13 cannot parse them
    execute 'alter table ai.checkpoints alter column checkpoint set compression lz4';
    execute 'alter table ai.checkpoint_blobs alter column blob set compression lz4';
    execute 'alter table ai.checkpoint_writes alter column blob set compression lz4';
  end if;
end
$$;

commit;
