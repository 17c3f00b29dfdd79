-- Deploy agent-state:checkpoint_compression_pglz to pg
-- requires: checkpoint_compression
--
-- Back to pglz for checkpoints, channel values and pending writes. checkpoint_compression chose
-- LZ4 for the put's CPU, measured one put at a time; the capacity bench (bench/capacity.sh, a
-- fleet of durable runs, A/B in the same run) measures the whole node step: with LZ4 the
-- database wrote 26-31 % more WAL per node step (the TOAST of checkpoint_blobs: the growing
-- message list, 9.7 KB per step against 5.7 KB with pglz) and stored 40 % more per run, while the
-- server CPU per node step did not differ beyond the run-to-run noise and the p99 save latency
-- stayed under 50 ms at the same levels. WAL is what a primary writes, ships to replicas and
-- archives; docs/benchmarks.md has the figures. Values written before keep their method
-- (Postgres reads both); only new values use pglz.
begin;

do $$
begin
  if pg_catalog.current_setting('server_version_num')::integer >= 140000 then
    -- constant statements, run through EXECUTE only because Postgres 13 cannot parse them
    execute 'alter table ai.checkpoints alter column checkpoint set compression pglz';
    execute 'alter table ai.checkpoint_blobs alter column blob set compression pglz';
    execute 'alter table ai.checkpoint_writes alter column blob set compression pglz';
  end if;
end
$$;

commit;
