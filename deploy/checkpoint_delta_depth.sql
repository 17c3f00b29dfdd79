-- Deploy agent-state:checkpoint_delta_depth to pg
-- requires: checkpoint_deltas
--
-- How many deltas a stored channel value is from a whole value: 0 for a whole value, the depth of
-- the version it extends plus one for a delta (deploy/checkpoint_deltas.sql). ai.put_checkpoint
-- reads it from the base it already probes and, where a delta would pass ai._max_delta_depth(),
-- stores the whole value instead (rebuilt by the database), so a read follows at most that many
-- links whatever a client sends (issue 34 item 4; docs/checkpoints.md, "Deltas").
--
-- The rows already stored get their depth here, from their chains. A put of the previous release's
-- functions during this deploy stores a delta at depth 0: its chain may then pass the bound by the
-- length it had, once; the next put past the bound on it is stored whole.
begin;

alter table ai.checkpoint_blobs add column delta_depth integer not null default 0;
comment on column ai.checkpoint_blobs.delta_depth is
  '0: blob is a whole value. A delta (base_version set): the delta_depth of its base plus one, at most ai._max_delta_depth(); a read of this version follows this many links.';
alter table ai_archive.checkpoint_blobs add column delta_depth integer not null default 0;

do $$
declare
  t text;
begin
  foreach t in array array['ai.checkpoint_blobs', 'ai_archive.checkpoint_blobs'] loop
    execute format($q$
      with recursive chain as (
        select b.thread_id, b.checkpoint_ns, b.channel, b.version, 0 as depth
        from %1$s b where b.base_version is null
        union all
        select d.thread_id, d.checkpoint_ns, d.channel, d.version, c.depth + 1
        from chain c
        join %1$s d on d.thread_id = c.thread_id and d.checkpoint_ns = c.checkpoint_ns
                   and d.channel = c.channel and d.base_version = c.version
      )
      update %1$s b set delta_depth = c.depth
      from chain c
      where c.depth > 0 and b.thread_id = c.thread_id and b.checkpoint_ns = c.checkpoint_ns
        and b.channel = c.channel and b.version = c.version$q$, t);
  end loop;
end
$$;

commit;
