-- Deploy agent-state:roles to pg
-- requires: schema
--
-- Two group roles (NOLOGIN); an operator grants them to login roles:
--   ai_user     a tenant. Sees and changes only the sessions it owns (owner = its role name).
--   ai_service  a trusted back-end or worker. Sees every tenant's rows, or acts for one end user
--               after ai.act_as(owner) (as PostgREST does with JWT claims).
-- Roles are global to the cluster: a second database deploying agent-state reuses them. When the
-- deploying role may not create roles, an administrator creates them first (docs/security.md).
begin;

do $$
declare
  r text;
begin
  foreach r in array array['ai_user', 'ai_service'] loop
    if not exists (select from pg_catalog.pg_roles where rolname = r) then
      if not exists (select from pg_catalog.pg_roles
                     where rolname = current_user and (rolcreaterole or rolsuper)) then
        raise exception using
          errcode = '42501',
          message = format('role %I does not exist and %I may not create it', r, current_user),
          hint = format('ask an administrator to run: CREATE ROLE %I NOLOGIN;', r);
      end if;
      execute format('create role %I nologin', r);
    end if;
  end loop;
end
$$;

grant usage on schema ai to ai_user, ai_service;

commit;
