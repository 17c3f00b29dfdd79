-- Revert agent-state:roles from pg
-- The roles are dropped only when nothing else uses them: other databases of the cluster may
-- have deployed agent-state too, and an operator may have granted them to login roles.
begin;

revoke usage on schema ai from ai_user, ai_service;

do $$
declare
  r text;
begin
  foreach r in array array['ai_service', 'ai_user'] loop
    if exists (select from pg_catalog.pg_auth_members m
               join pg_catalog.pg_roles g on g.oid = m.roleid where g.rolname = r) then
      raise notice 'keeping role %: it is granted to other roles', r;
      continue;
    end if;
    begin
      execute format('drop role %I', r);
    exception when dependent_objects_still_exist or insufficient_privilege then
      raise notice 'keeping role %: %', r, sqlerrm;
    end;
  end loop;
end
$$;

commit;
