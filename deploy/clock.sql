-- Deploy agent-state:clock to pg
-- Reworked after v0.1.0; the tagged script is deploy/clock@v0.1.0.sql.
-- requires: roles
begin;

-- The one clock. clock_timestamp() rather than now(): a long transaction (a worker holding a
-- fenced write open) must still see leases expire. Callers read it once per function.
-- Tests set ai.frozen_now (a timestamptz, transaction- or session-local) to move time without
-- sleeping; the setting affects only the session that sets it, and only when the calling role may
-- freeze the clock: it is a member of the role ai_test_clock (the test suites create it and grant
-- it to their roles; a production cluster has none), as a superuser is of any role that exists. The calling role
-- is the one ai.calling_role() finds (deploy/owners.sql): SET ROLE's role, else the login role,
-- both unchanged inside a SECURITY DEFINER function, where current_user is the schema owner.
-- Anyone can set a setting, and a tenant whose clock ran ahead would judge a live
-- worker's side-effect reservation dead and take it over, or backdate its usage records.
-- The check runs only when the setting is not empty, so the wall clock costs what it did.
-- No SET search_path (docs/security.md, "search_path"): every function calls it, and a SET clause
-- costs each call a search-path switch and stops inlining. Every name, type and operator in the
-- body is qualified instead, so the caller's search_path resolves nothing in it.
create or replace function ai.now() returns timestamptz
language sql volatile parallel safe
as $$
  select case when pg_catalog.current_setting('ai.frozen_now', true) operator(pg_catalog.<>) ''
              then case when coalesce(pg_catalog.pg_has_role(
                                case when pg_catalog.current_setting('role') operator(pg_catalog.=) 'none'
                                     then session_user
                                     else pg_catalog.current_setting('role')::pg_catalog.name end,
                                pg_catalog.to_regrole('ai_test_clock'), 'MEMBER'), false)
                        then pg_catalog.current_setting('ai.frozen_now', true)::pg_catalog.timestamptz
                        else pg_catalog.clock_timestamp() end
              else pg_catalog.clock_timestamp() end
$$;

comment on function ai.now() is
  'The clock every agent-state function uses: clock_timestamp(), unless the setting ai.frozen_now holds a timestamptz and the calling role (SET ROLE''s, else the login role) is a member of the role ai_test_clock, as the tests'' roles and a superuser are: tests move time with it; a tenant''s setting changes nothing.';

revoke execute on function ai.now() from public;
grant execute on function ai.now() to ai_user, ai_service;

commit;
