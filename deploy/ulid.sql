-- Deploy agent-state:ulid to pg
-- requires: clock
-- requires: errors
--
-- ULIDs: 48 bits of milliseconds since the epoch, then 80 random bits, written as
-- 26 characters of Crockford base32. They sort as text in time order, which is what
-- lets "newest checkpoint" be a descending index scan and "between T1 and T2" a range.
-- Within one session, two ULIDs of the same millisecond are made monotonic by
-- incrementing the random part of the previous one (kept in the session setting
-- ai.ulid_state); time comes from ai.now(), so a frozen clock still yields increasing ids.
begin;

create or replace function ai.ulid()
returns text
language plpgsql
volatile parallel unsafe
set search_path = pg_catalog, pg_temp
as $$
declare
  v_ms bigint := floor(extract(epoch from ai.now()) * 1000)::bigint;
  v_state text[] := string_to_array(nullif(current_setting('ai.ulid_state', true), ''), ':');
  v_rand bytea;
  v_hi bigint;  -- upper 40 random bits
  v_lo bigint;  -- lower 40 random bits
  v_alphabet constant text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  v_out text := '';
begin
  if v_state is not null and v_state[1]::bigint >= v_ms then
    -- same (or a clock that went back) millisecond: previous random part + 1
    v_ms := v_state[1]::bigint;
    v_hi := v_state[2]::bigint;
    v_lo := v_state[3]::bigint + 1;
    if v_lo >= (1::bigint << 40) then
      v_lo := 0;
      v_hi := v_hi + 1;
      if v_hi >= (1::bigint << 40) then
        v_hi := 0;
        v_ms := v_ms + 1;
      end if;
    end if;
  else
    -- 80 random bits from bytes of a v4 uuid that carry no version/variant bits
    v_rand := substr(uuid_send(gen_random_uuid()), 1, 5) || substr(uuid_send(gen_random_uuid()), 11, 5);
    v_hi := 0;
    v_lo := 0;
    for i in 0 .. 4 loop
      v_hi := (v_hi << 8) | get_byte(v_rand, i)::bigint;
      v_lo := (v_lo << 8) | get_byte(v_rand, i + 5)::bigint;
    end loop;
  end if;
  perform set_config('ai.ulid_state', v_ms::text || ':' || v_hi::text || ':' || v_lo::text, false);
  -- 10 characters of time, then 8 + 8 of randomness (5 bits each, most significant first)
  for i in reverse 9 .. 0 loop
    v_out := v_out || substr(v_alphabet, ((v_ms >> (5 * i)) & 31::bigint)::integer + 1, 1);
  end loop;
  for i in reverse 7 .. 0 loop
    v_out := v_out || substr(v_alphabet, ((v_hi >> (5 * i)) & 31::bigint)::integer + 1, 1);
  end loop;
  for i in reverse 7 .. 0 loop
    v_out := v_out || substr(v_alphabet, ((v_lo >> (5 * i)) & 31::bigint)::integer + 1, 1);
  end loop;
  return v_out;
end;
$$;

comment on function ai.ulid() is
  'A new ULID: 26 characters of Crockford base32 (48-bit millisecond time from ai.now(), 80 random bits). '
  'Sorts in time order; monotonic within a millisecond in one session.';

create or replace function ai.ulid_time(ulid text)
returns timestamptz
language plpgsql
immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
declare
  v_alphabet constant text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  v_ms bigint := 0;
  v_pos integer;
  p_ulid text := upper(ulid_time.ulid);
begin
  if p_ulid is null then
    raise exception using errcode = 'AS002', message = 'ulid must not be null';
  end if;
  if length(p_ulid) <> 26 or p_ulid !~ '^[0-7][0-9A-HJKMNP-TV-Z]{25}$' then
    raise exception using errcode = 'AS002', message = format('%L is not a ULID', p_ulid);
  end if;
  for i in 1 .. 10 loop
    v_pos := strpos(v_alphabet, substr(p_ulid, i, 1)) - 1;
    v_ms := (v_ms << 5) | v_pos::bigint;
  end loop;
  return to_timestamp(v_ms::numeric / 1000.0);
end;
$$;

comment on function ai.ulid_time(text) is
  'The timestamp (millisecond precision) encoded in a ULID. Raises AS002 when the text is not a ULID.';

revoke execute on function ai.ulid() from public;
revoke execute on function ai.ulid_time(text) from public;
grant execute on function ai.ulid() to ai_user, ai_service;
grant execute on function ai.ulid_time(text) to ai_user, ai_service;

commit;
