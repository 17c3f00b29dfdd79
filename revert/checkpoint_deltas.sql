-- Revert agent-state:checkpoint_deltas from pg
--
-- A delta row means nothing without base_version: a revert first makes every delta a whole
-- value (a msgpack array of the base's items and its own), then drops the column, so the rows
-- a release that knows no deltas reads are whole values.
begin;

do $$
declare
  t text;
begin
  foreach t in array array['ai.checkpoint_blobs', 'ai_archive.checkpoint_blobs'] loop
    execute format($q$
      with recursive chain as (
        select b.thread_id, b.checkpoint_ns, b.channel, b.version, b.base_version as next, 0 as depth,
               b.blob as part
        from %1$s b where b.base_version is not null
        union all
        select c.thread_id, c.checkpoint_ns, c.channel, c.version, p.base_version, c.depth + 1, p.blob
        from chain c
        join %1$s p on p.thread_id = c.thread_id and p.checkpoint_ns = c.checkpoint_ns
                   and p.channel = c.channel and p.version = c.next
      ), whole as (
        select thread_id, checkpoint_ns, channel, version,
               ai._msgpack_concat(array_agg(part order by depth desc)) as blob
        from chain group by thread_id, checkpoint_ns, channel, version
      )
      update %1$s b set blob = w.blob, base_version = null
      from whole w
      where b.thread_id = w.thread_id and b.checkpoint_ns = w.checkpoint_ns and b.channel = w.channel
        and b.version = w.version$q$, t);
  end loop;
end
$$;

drop function ai._msgpack_concat(bytea[]);
delete from ai.error_codes where sqlstate in ('AS060', 'AS061', 'AS062');
alter table ai.checkpoint_blobs drop column base_version;
alter table ai_archive.checkpoint_blobs drop column base_version;

commit;
