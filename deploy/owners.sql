-- Deploy agent-state:owners to pg
-- requires: roles
-- requires: errors
--
-- Who is calling. A tenant is its login role (member of ai_user): owner = current_user.
-- A trusted back-end (member of ai_service) either acts for one end user it has authenticated,
-- after ai.act_as(owner), or, with no acting owner set, sees every tenant (workers claim across
-- tenants). A plain role cannot impersonate anyone: the setting ai.acting_owner is honoured only
-- for members of ai_service, so setting it by hand changes nothing for a tenant.
-- Policies call these through (select ...), which Postgres evaluates once per statement.
begin;

create function ai.current_owner() returns text
language sql stable parallel safe
as $$
  select case
    when pg_catalog.pg_has_role(current_user, 'ai_service', 'MEMBER')
         and coalesce(pg_catalog.current_setting('ai.acting_owner', true), '') <> ''
      then pg_catalog.current_setting('ai.acting_owner', true)
    else current_user::text
  end
$$;
comment on function ai.current_owner() is
  'The tenant the caller acts as: the acting owner set by ai.act_as() for members of ai_service, otherwise the current role''s name.';

create function ai.sees_all_owners() returns boolean
language sql stable parallel safe
as $$
  select pg_catalog.pg_has_role(current_user, 'ai_service', 'MEMBER')
     and coalesce(pg_catalog.current_setting('ai.acting_owner', true), '') = ''
$$;
comment on function ai.sees_all_owners() is
  'True for a member of ai_service that acts for no particular owner: it sees and may change every tenant''s rows.';

create function ai.act_as(owner text, local boolean default true) returns text
language plpgsql volatile
as $$
begin
  if not pg_catalog.pg_has_role(current_user, 'ai_service', 'MEMBER') then
    raise exception using errcode = 'AS007',
      message = format('role %s may not act for another owner: it is not a member of ai_service', current_user);
  end if;
  if owner is not null then
    perform ai._check_text(owner, 'owner');
  end if;
  -- NULL clears the acting owner: the service sees every tenant again. ('' is refused above.)
  return pg_catalog.set_config('ai.acting_owner', coalesce(owner, ''), local);
end
$$;
comment on function ai.act_as(text, boolean) is
  'For members of ai_service: act for the given end-user owner until the transaction ends (local => true) or the session ends; NULL stops acting. Raises AS007 for anyone else.';

revoke execute on function ai.current_owner(), ai.sees_all_owners(), ai.act_as(text, boolean) from public;
grant execute on function ai.current_owner(), ai.sees_all_owners() to ai_user, ai_service;
grant execute on function ai.act_as(text, boolean) to ai_user, ai_service;

commit;
