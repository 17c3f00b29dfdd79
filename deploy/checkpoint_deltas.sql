-- Deploy agent-state:checkpoint_deltas to pg
-- requires: checkpoints
-- requires: retention
--
-- Append-only channels written once. A LangGraph channel whose value is a list that a step only
-- extends (an add_messages or operator.add list) is stored, for its new version, as the items
-- appended: a row of ai.checkpoint_blobs whose base_version names the version it extends, and
-- whose blob is a msgpack array of the new items. The value of such a version is the base's
-- value followed by the items of every delta on the way (ai.get_checkpoint rebuilds it in SQL,
-- so readers receive one whole value as before). A row with base_version NULL holds a whole
-- value, as every row written by 0.1.0 does. So the bytes written per step stay the size of
-- what the step added, not of the whole list; docs/checkpoints.md has the rules the saver
-- follows to choose (python/agent_state/langgraph_saver.py) and what falls back to a whole value.
begin;

alter table ai.checkpoint_blobs add column base_version text collate "C";
comment on column ai.checkpoint_blobs.base_version is
  'NULL: blob is the whole value. Otherwise blob is a msgpack array of the items appended to the value of the same channel at base_version (a delta); the value is rebuilt by following base_version to a whole value.';
alter table ai_archive.checkpoint_blobs add column base_version text collate "C";

insert into ai.error_codes (sqlstate, name, description) values
  ('AS060', 'broken_channel_delta', 'A channel value stored as a delta cannot be rebuilt: it is not a msgpack array, or a version it extends is missing.'),
  ('AS061', 'delta_base_missing', 'A channel delta given to put_checkpoint extends a version that is not stored, or is not a list of items: send the whole value.'),
  ('AS062', 'snapshot_too_old_to_delete', 'A function that deletes checkpoints was called in a repeatable read or serializable transaction, whose snapshot cannot see the versions that runs committed while it waited extend: call it at read committed.');

-- The items of msgpack arrays, in order, as one msgpack array: a whole value followed by its
-- deltas. A msgpack array is a header (0x90 | n for up to 15 items, 0xdc and a 16-bit count, or
-- 0xdd and a 32-bit count, big-endian) followed by its items, each encoded on its own, so the
-- items of several arrays are their bodies one after the other under a header for the sum.
-- Defined with the column whose rows it reads (the revert of this change needs it to make every
-- delta whole again), not with the functions that call it.
create function ai._msgpack_concat(parts bytea[]) returns bytea
language plpgsql immutable strict parallel safe
set search_path = pg_catalog, pg_temp
as $$
declare
  v_part bytea;
  v_first integer;
  v_count bigint := 0::bigint;
  v_body bytea[] := '{}'::bytea[];
begin
  foreach v_part in array parts loop
    v_first := case when pg_catalog.length(v_part) > 0 then pg_catalog.get_byte(v_part, 0) end;
    if v_first between 144 and 159 then      -- fixarray
      v_count := v_count + (v_first - 144);
      v_body := v_body || pg_catalog.substr(v_part, 2);
    elsif v_first = 220 and pg_catalog.length(v_part) >= 3 then    -- array 16
      v_count := v_count + (pg_catalog.get_byte(v_part, 1) << 8 | pg_catalog.get_byte(v_part, 2));
      v_body := v_body || pg_catalog.substr(v_part, 4);
    elsif v_first = 221 and pg_catalog.length(v_part) >= 5 then    -- array 32
      v_count := v_count + ((pg_catalog.get_byte(v_part, 1)::bigint << 24) | (pg_catalog.get_byte(v_part, 2) << 16)
                            | (pg_catalog.get_byte(v_part, 3) << 8) | pg_catalog.get_byte(v_part, 4));
      v_body := v_body || pg_catalog.substr(v_part, 6);
    else
      raise exception using errcode = 'AS060', message = 'a stored channel delta is not a msgpack array';
    end if;
  end loop;
  return case
           when v_count <= 15 then pg_catalog.set_byte('\x00'::bytea, 0, 144 + v_count::integer)
           when v_count <= 65535 then '\xdc'::bytea || pg_catalog.substr(pg_catalog.int4send(v_count::integer), 3)
           else '\xdd'::bytea || pg_catalog.int4send(v_count::integer)
         end || coalesce((select pg_catalog.string_agg(b.body, ''::bytea order by b.ord)
                          from unnest(v_body) with ordinality as b(body, ord)), ''::bytea);
end
$$;
comment on function ai._msgpack_concat(bytea[]) is
  'Internal: the items of the given msgpack arrays, in order, as one msgpack array (a channel value rebuilt from a whole value and its deltas). AS060 when a part is not a msgpack array.';
revoke execute on function ai._msgpack_concat(bytea[]) from public;

commit;
