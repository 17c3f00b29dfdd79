-- Deploy agent-state:clock to pg
-- Reworked after v0.1.0; the tagged script is deploy/clock@v0.1.0.sql.
-- requires: roles
begin;

-- The one clock. clock_timestamp() rather than now(): a long transaction (a worker holding a
-- fenced write open) must still see leases expire. Callers read it once per function.
-- Tests set ai.frozen_now (a timestamptz, transaction- or session-local) to move time without
-- sleeping; the setting affects only the session that sets it.
-- No SET search_path (docs/security.md, "search_path"): every function calls it, and a SET clause
-- costs each call a search-path switch and stops inlining. Every name, type and operator in the
-- body is qualified instead, so the caller's search_path resolves nothing in it.
create or replace function ai.now() returns timestamptz
language sql volatile parallel safe
as $$
  select coalesce(case when pg_catalog.current_setting('ai.frozen_now', true) operator(pg_catalog.<>) ''
                       then pg_catalog.current_setting('ai.frozen_now', true)::pg_catalog.timestamptz end,
                  pg_catalog.clock_timestamp())
$$;

comment on function ai.now() is
  'The clock every agent-state function uses: clock_timestamp(), unless the setting ai.frozen_now holds a timestamptz (tests use it to move time without sleeping).';

revoke execute on function ai.now() from public;
grant execute on function ai.now() to ai_user, ai_service;

commit;
