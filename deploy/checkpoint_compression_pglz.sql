-- Deploy agent-state:checkpoint_compression_pglz to pg
-- requires: checkpoint_compression
--
-- Back to pglz for checkpoints, channel values and pending writes. checkpoint_compression chose
-- LZ4 for the put's CPU, measured one put at a time; the capacity bench (bench/capacity.sh, a
-- fleet of durable runs, A/B in the same run) measures the whole node step: with LZ4 the database
-- wrote 32-41 % more WAL per node step (the TOAST of checkpoint_blobs, i.e. the growing message
-- list: 9.5 KB per step against 5.3 KB with pglz) and stored 38 % more per run; pglz costs 14-19 %
-- more server CPU per node step at 50-200 runs in the same run. WAL is what a primary writes,
-- ships to replicas and archives, and the issue's target; docs/benchmarks.md has the figures.
-- Values written before keep their method (Postgres reads both); only new values use pglz.
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
