-- Deploy agent-state:clock to pg
-- requires: schema
begin;

-- The one clock. clock_timestamp() rather than now(): a long transaction (a worker holding a
-- fenced write open) must still see leases expire. Callers read it once per function.
-- Tests set ai.frozen_now (a timestamptz, transaction- or session-local) to move time without
-- sleeping; the setting affects only the session that sets it.
create function ai.now() returns timestamptz
language sql volatile parallel safe
set search_path = pg_catalog, pg_temp
as $$
  select coalesce(nullif(pg_catalog.current_setting('ai.frozen_now', true), '')::timestamptz,
                  pg_catalog.clock_timestamp())
$$;

comment on function ai.now() is
  'The clock every agent-state function uses: clock_timestamp(), unless the setting ai.frozen_now holds a timestamptz (tests use it to move time without sleeping).';

revoke execute on function ai.now() from public;
grant execute on function ai.now() to ai_user, ai_service;

commit;
